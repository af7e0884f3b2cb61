// The queue manager: the RTL twin of qm::QueueManager (tlm/qm/queue_manager.h),
// making the same decisions for the same operations: buffer admission
// (tlm/mmu/mmu.h), the free-cell list and per-queue packet lists, the
// XOFF/XON state of every (port, PG) (tlm/pfc/pfc.h) and the ECN decision of
// every queue (tlm/ecn/marker.h). docs/rtl.md describes the structure, the
// CSR map and the ports.
//
// One engine, one operation at a time, one cell operation per cycle.
// res_cycles (clock edges from the edge that accepts the operation to the
// edge that registers its result) is:
//   enqueue, admitted:   1 + cells (admission; then one cycle per cell taken
//                        off the free list, the first also evaluating PFC,
//                        the last linking the packet to its queue)
//   enqueue, dropped:    1
//   dequeue:             1 + cells (unlink and release; then one cycle per
//                        cell of the chain walked back to the free list, the
//                        first also evaluating PFC and ECN)
//   pfc_tick, or error:  1
// op_ready is high again in the cycle res_valid is high, so back to back an
// operation occupies res_cycles + 1 cycles of the port.
//
// Storage: configuration registers written through the CSR port; per (port,
// PG) and (port, queue) state in registers; the next-cell memory and the
// packet descriptor memory (indexed by head cell: next packet, cells, bytes,
// ingress port and PG) as CELLS-deep arrays with one write per cycle each
// (asynchronous read, as register files). The
// next-cell memory is built by a walk of total_cells cycles after a G_CTRL
// init (busy meanwhile), as a RAM without reset would be.
module qm #(
    parameter int P = 8,         // ports (>= 2; 8 queues and 8 PGs each)
    parameter int CELLS = 4096,  // cell memory depth (>= 2): the largest total_cells
    parameter int POOLS = 4,     // service pools (>= 2)
    parameter int CNT_W = 20,    // cell counters, reserves, thresholds (<= 32; > log2(CELLS))
    parameter int BYTE_W = 32,   // queue byte counters, packet bytes (<= 32)
    parameter int ECN_W = 32,    // ECN thresholds (<= 32)
    parameter int PFC_W = 32,    // PFC generator thresholds (<= 32)
    // derived
    parameter int PW = $clog2(P),           // port index
    parameter int AW = $clog2(CELLS),       // cell address
    parameter int CW = AW + 1,              // cell pointer: all ones = no cell
    parameter int PLW = $clog2(POOLS),      // pool index
    parameter int QIW = PW + 3,             // (port, queue) or (port, PG) index
    parameter int TH_W = CNT_W + 7          // threshold: free cells << 7 at most
) (
    input  logic              clk,
    input  logic              rst,           // synchronous, active high

    // CSR write port (qm_pkg: address map); one write per cycle
    input  logic              csr_valid,
    input  logic [23:0]       csr_addr,
    input  logic [31:0]       csr_data,

    // operation port: held while op_valid && !op_ready
    input  logic              op_valid,
    output logic              op_ready,
    input  logic [1:0]        op_kind,       // qm_pkg::OP_*
    input  logic [PW-1:0]     op_in_port,    // enqueue; pfc_tick: the port
    input  logic [2:0]        op_pg,         // enqueue; pfc_tick: the PG
    input  logic [PW-1:0]     op_out_port,   // enqueue; dequeue: the port
    input  logic [2:0]        op_queue,      // enqueue; dequeue: the queue
    input  logic [CNT_W-1:0]  op_cells,      // enqueue, >= 1
    input  logic [BYTE_W-1:0] op_bytes,      // enqueue
    input  logic              op_lossless,   // enqueue
    input  logic              op_ecn_frame,  // enqueue, dequeue
    input  logic [1:0]        op_ecn,        // enqueue, dequeue
    input  logic [31:0]       op_rand32,     // enqueue, dequeue
    input  logic              op_discard,    // dequeue

    // result port: res_valid is high for one cycle, in which the fields are
    // the operation's result (they change while the next one runs)
    output logic              res_valid,
    output logic [1:0]        res_kind,
    output logic              res_error,     // malformed op (port out of range, 0 cells, empty queue); nothing changed
    output logic [2:0]        res_verdict,   // qm_pkg::V_* (enqueue)
    output logic              res_lossless,  // enqueue: handled as lossless
    output logic              res_in_headroom,
    output logic [CW-1:0]     res_head_cell, // all ones: none
    output logic [CNT_W-1:0]  res_cells,     // dequeue
    output logic [BYTE_W-1:0] res_bytes,     // dequeue
    output logic [PW-1:0]     res_in_port,   // charge: route and pools
    output logic [2:0]        res_pg,
    output logic [PW-1:0]     res_out_port,
    output logic [2:0]        res_queue,
    output logic [PLW-1:0]    res_in_pool,
    output logic [PLW-1:0]    res_eg_pool,
    output logic [CNT_W-1:0]  res_in_reserved,  // charge: buckets (enqueue: charged; dequeue: returned from)
    output logic [CNT_W-1:0]  res_in_shared,
    output logic [CNT_W-1:0]  res_headroom,
    output logic [CNT_W-1:0]  res_eg_reserved,
    output logic [CNT_W-1:0]  res_eg_shared,
    output logic [CNT_W-1:0]  res_pg_reserved,  // the PG after the operation
    output logic [CNT_W-1:0]  res_pg_shared,
    output logic [CNT_W-1:0]  res_pg_headroom,
    output logic [TH_W-1:0]   res_pg_threshold,
    output logic [1:0]        res_pfc,       // qm_pkg::PFC_*
    output logic              res_ecn_decided,
    output logic              res_ecn_fired,
    output logic              res_ecn_mark,
    output logic              res_ecn_drew,
    output logic [15:0]       res_cycles,

    output logic              busy,
    output logic              idle,

    // read port (combinational)
    input  logic [QIW-1:0]    rd_qidx,       // port * 8 + queue, and the same for the PG
    input  logic [AW-1:0]     rd_cell,
    input  logic [PLW-1:0]    rd_pool,
    output logic [CW-1:0]     rd_q_head,
    output logic [CW-1:0]     rd_q_tail,
    output logic [CNT_W-1:0]  rd_q_packets,
    output logic [BYTE_W-1:0] rd_q_bytes,
    output logic [CNT_W-1:0]  rd_q_reserved,
    output logic [CNT_W-1:0]  rd_q_shared,
    output logic [TH_W-1:0]   rd_q_threshold,
    output logic              rd_q_hyst,
    output logic [CNT_W-1:0]  rd_pg_reserved,
    output logic [CNT_W-1:0]  rd_pg_shared,
    output logic [CNT_W-1:0]  rd_pg_headroom,
    output logic [TH_W-1:0]   rd_pg_threshold,
    output logic              rd_pg_xoff,
    output logic [CW-1:0]     rd_next_cell,
    output logic [CNT_W-1:0]  rd_pool_used,
    output logic [CW-1:0]     rd_free_head,
    output logic [CNT_W-1:0]  rd_free_count,
    output logic [CNT_W-1:0]  rd_hdrm_used,
    output logic              rd_init_done
);
  import qm_pkg::*;

  localparam int NQ = P * 8;
  localparam logic [CW-1:0] NOCELL = '1;
  localparam int LW = TH_W > PFC_W ? TH_W : PFC_W;  // XOFF level
  localparam int QW = BYTE_W > CNT_W ? BYTE_W : CNT_W;  // ECN queue length

  // ---------------------------------------------------------------------------
  // Configuration (CSR)
  // ---------------------------------------------------------------------------
  logic [CNT_W-1:0] cfg_total_cells;
  logic [PW:0]      cfg_ports;
  logic [CNT_W-1:0] cfg_shared_hdrm;
  logic             cfg_pfc_en, cfg_dyn_xoff;
  logic [1:0]       cfg_xon_rule;
  logic [7:0]       cfg_pfc_pgs;
  logic [PFC_W-1:0] cfg_xoff_cells, cfg_xon_offset, cfg_xon_cells;
  logic [16:0]      cfg_xon_ratio;
  logic [CNT_W-1:0] cfg_pool_size [POOLS];
  // per queue index (every port alike)
  logic [1:0]       cfg_ecn_mode  [8];
  logic             cfg_ecn_point [8];
  logic             cfg_ecn_unit  [8];
  logic [ECN_W-1:0] cfg_ecn_k [8], cfg_ecn_kmin [8], cfg_ecn_kmax [8], cfg_ecn_khigh [8], cfg_ecn_klow [8];
  logic [32:0]      cfg_ecn_p32 [8];
  // per (port, PG) and (port, queue), threshold mode resolved
  logic             pgc_lossless [NQ], pgc_dyn [NQ], qc_dyn [NQ];
  logic signed [3:0] pgc_shift [NQ], qc_shift [NQ];
  logic [PLW-1:0]   pgc_pool [NQ], qc_pool [NQ];
  logic [CNT_W-1:0] pgc_reserve [NQ], pgc_static [NQ], pgc_hdrm [NQ];
  logic [CNT_W-1:0] qc_reserve [NQ], qc_static [NQ];

  logic [3:0]  csr_region;
  logic [11:0] csr_index;
  logic [2:0]  csr_sub;
  logic [4:0]  csr_field;
  logic [QIW-1:0] csr_qi;
  logic csr_port_ok;
  assign csr_region = csr_addr[23:20];
  assign csr_index = csr_addr[19:8];
  assign csr_sub = csr_addr[7:5];
  assign csr_field = csr_addr[4:0];
  assign csr_qi = {csr_index[PW-1:0], csr_sub};
  assign csr_port_ok = 32'(csr_index) < P;

  always_ff @(posedge clk) begin
    if (rst) begin
      cfg_total_cells <= '0;
      cfg_ports <= '0;
      cfg_shared_hdrm <= '0;
      cfg_pfc_en <= 1'b0;
      cfg_dyn_xoff <= 1'b0;
      cfg_xon_rule <= XON_OFFSET;
      cfg_pfc_pgs <= '0;
      cfg_xoff_cells <= '0;
      cfg_xon_offset <= '0;
      cfg_xon_cells <= '0;
      cfg_xon_ratio <= '0;
      cfg_pool_size <= '{default: '0};
      cfg_ecn_mode <= '{default: ECN_OFF};
      cfg_ecn_point <= '{default: ECN_AT_ENQUEUE};
      cfg_ecn_unit <= '{default: ECN_IN_BYTES};
      cfg_ecn_k <= '{default: '0};
      cfg_ecn_kmin <= '{default: '0};
      cfg_ecn_kmax <= '{default: '0};
      cfg_ecn_p32 <= '{default: '0};
      cfg_ecn_khigh <= '{default: '0};
      cfg_ecn_klow <= '{default: '0};
      pgc_lossless <= '{default: '0};
      pgc_dyn <= '{default: '0};
      pgc_shift <= '{default: '0};
      pgc_pool <= '{default: '0};
      pgc_reserve <= '{default: '0};
      pgc_static <= '{default: '0};
      pgc_hdrm <= '{default: '0};
      qc_dyn <= '{default: '0};
      qc_shift <= '{default: '0};
      qc_pool <= '{default: '0};
      qc_reserve <= '{default: '0};
      qc_static <= '{default: '0};
    end else if (csr_valid) begin
      unique case (csr_region)
        R_GLOBAL:
          unique case (csr_field)
            G_TOTAL_CELLS: cfg_total_cells <= csr_data[CNT_W-1:0];
            G_PORTS: cfg_ports <= csr_data[PW:0];
            G_SHARED_HDRM: cfg_shared_hdrm <= csr_data[CNT_W-1:0];
            G_PFC_CTRL: begin
              cfg_pfc_en <= csr_data[0];
              cfg_dyn_xoff <= csr_data[1];
              cfg_xon_rule <= csr_data[3:2];
              cfg_pfc_pgs <= csr_data[15:8];
            end
            G_PFC_XOFF: cfg_xoff_cells <= csr_data[PFC_W-1:0];
            G_PFC_XON_OFFSET: cfg_xon_offset <= csr_data[PFC_W-1:0];
            G_PFC_XON_CELLS: cfg_xon_cells <= csr_data[PFC_W-1:0];
            G_PFC_XON_RATIO: cfg_xon_ratio <= csr_data[16:0];
            default: ;  // G_CTRL is the engine's
          endcase
        R_POOL:
          if (32'(csr_index) < POOLS && csr_field == 5'd0) cfg_pool_size[csr_index[PLW-1:0]] <= csr_data[CNT_W-1:0];
        R_ECN:
          unique case (csr_field)
            E_MODE: begin
              cfg_ecn_mode[csr_sub] <= csr_data[1:0];
              cfg_ecn_point[csr_sub] <= csr_data[2];
              cfg_ecn_unit[csr_sub] <= csr_data[3];
            end
            E_K: cfg_ecn_k[csr_sub] <= csr_data[ECN_W-1:0];
            E_KMIN: cfg_ecn_kmin[csr_sub] <= csr_data[ECN_W-1:0];
            E_KMAX: cfg_ecn_kmax[csr_sub] <= csr_data[ECN_W-1:0];
            E_P32_LO: cfg_ecn_p32[csr_sub][31:0] <= csr_data;
            E_P32_HI: cfg_ecn_p32[csr_sub][32] <= csr_data[0];
            E_K_HIGH: cfg_ecn_khigh[csr_sub] <= csr_data[ECN_W-1:0];
            E_K_LOW: cfg_ecn_klow[csr_sub] <= csr_data[ECN_W-1:0];
            default: ;
          endcase
        R_PG:
          if (csr_port_ok)
            unique case (csr_field)
              L_FLAGS: begin
                pgc_lossless[csr_qi] <= csr_data[0];
                pgc_dyn[csr_qi] <= csr_data[1];
                pgc_shift[csr_qi] <= csr_data[7:4];
                pgc_pool[csr_qi] <= csr_data[8+:PLW];
              end
              L_RESERVE: pgc_reserve[csr_qi] <= csr_data[CNT_W-1:0];
              L_STATIC: pgc_static[csr_qi] <= csr_data[CNT_W-1:0];
              L_HEADROOM: pgc_hdrm[csr_qi] <= csr_data[CNT_W-1:0];
              default: ;
            endcase
        R_QUEUE:
          if (csr_port_ok)
            unique case (csr_field)
              L_FLAGS: begin
                qc_dyn[csr_qi] <= csr_data[1];
                qc_shift[csr_qi] <= csr_data[7:4];
                qc_pool[csr_qi] <= csr_data[8+:PLW];
              end
              L_RESERVE: qc_reserve[csr_qi] <= csr_data[CNT_W-1:0];
              L_STATIC: qc_static[csr_qi] <= csr_data[CNT_W-1:0];
              default: ;
            endcase
        default: ;
      endcase
    end
  end

  // ---------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------
  // per (port, PG)
  logic [CNT_W-1:0] pg_rsv [NQ], pg_shr [NQ], pg_hdr [NQ];
  logic             pg_xoff [NQ];
  // per (port, queue)
  logic [CNT_W-1:0] q_rsv [NQ], q_shr [NQ], q_packets [NQ];
  logic [BYTE_W-1:0] q_bytes [NQ];
  logic [CW-1:0]    q_head [NQ], q_tail [NQ];
  logic             q_hyst [NQ];
  // pools, shared headroom, free list
  logic [CNT_W-1:0] pool_used [POOLS];
  logic [CNT_W-1:0] hdrm_used;
  logic [CW-1:0]    free_head;
  logic [CNT_W-1:0] free_count;
  // cell memories: next-cell pointers; the descriptor of a packet at its head
  // cell (next packet, cells, bytes, the PG it was charged to)
  logic [CW-1:0]     next_mem [CELLS];
  logic [CW-1:0]     d_next_pkt [CELLS];
  logic [CNT_W-1:0]  d_cells [CELLS];
  logic [BYTE_W-1:0] d_bytes [CELLS];
  logic [PW-1:0]     d_in_port [CELLS];
  logic [2:0]        d_pg [CELLS];

  typedef enum logic [2:0] {
    S_IDLE, S_INIT, S_ENQ_ADMIT, S_ENQ_WALK, S_DEQ_HEAD, S_DEQ_WALK, S_TICK
  } state_e;
  state_e state;
  logic init_pending, init_done;
  logic [CNT_W-1:0] init_i;
  logic [15:0] cyc;

  // the operation being executed
  logic [1:0]        o_kind;
  logic [PW-1:0]     o_in_port, o_out_port;
  logic [2:0]        o_pg, o_queue;
  logic [CNT_W-1:0]  o_cells;
  logic [BYTE_W-1:0] o_bytes;
  logic              o_lossless, o_ecn_frame, o_discard;
  logic [1:0]        o_ecn;
  logic [31:0]       o_rand32;
  // carried between its cycles
  logic [QIW-1:0]    r_gi;           // its PG (enqueue, tick: the op's; dequeue: the packet's)
  logic              r_lossless;     // PFC applies (handled as lossless / a lossless PG)
  logic              r_in_headroom;
  logic [CW-1:0]     r_head;         // the packet's head cell
  logic [AW-1:0]     r_cur;          // the walk's cell
  logic [CNT_W-1:0]  r_k;            // cells walked

  assign op_ready = state == S_IDLE && init_done && !init_pending;
  assign busy = state != S_IDLE || init_pending;
  assign idle = !busy;
  assign rd_init_done = init_done;

  // ---------------------------------------------------------------------------
  // Combinational: the op's PG and queue, their limits, and the decisions
  // ---------------------------------------------------------------------------
  logic [QIW-1:0] qi, gi, d_gi;
  logic [AW-1:0]  head_addr;
  assign qi = {o_out_port, o_queue};
  assign head_addr = q_head[qi][AW-1:0];
  assign d_gi = {d_in_port[head_addr], d_pg[head_addr]};
  assign gi = state == S_DEQ_HEAD ? d_gi : r_gi;

  logic [CNT_W-1:0] g_r, g_s, g_h, q_r, q_s;
  logic [PLW-1:0]   g_pool, e_pool;
  logic [TH_W-1:0]  g_thr, q_thr;
  assign g_r = pg_rsv[gi];
  assign g_s = pg_shr[gi];
  assign g_h = pg_hdr[gi];
  assign q_r = q_rsv[qi];
  assign q_s = q_shr[qi];
  assign g_pool = pgc_pool[gi];
  assign e_pool = qc_pool[qi];

  qm_threshold #(.CNT_W(CNT_W)) u_thr_pg (
      .dynamic(pgc_dyn[gi]), .shift(pgc_shift[gi]), .static_cells(pgc_static[gi]),
      .pool_used(pool_used[g_pool]), .pool_size(cfg_pool_size[g_pool]), .threshold(g_thr));
  qm_threshold #(.CNT_W(CNT_W)) u_thr_q (
      .dynamic(qc_dyn[qi]), .shift(qc_shift[qi]), .static_cells(qc_static[qi]),
      .pool_used(pool_used[e_pool]), .pool_size(cfg_pool_size[e_pool]), .threshold(q_thr));

  // Admission (mmu::Mmu::admit) of the op in S_ENQ_ADMIT
  logic [CNT_W-1:0] a_in_r, a_rest, a_in_s, a_hr, a_eg_r, a_eg_s;
  logic [2:0] a_ing_v, a_eg_v, a_verdict;
  logic a_lossless;
  always_comb begin
    a_lossless = o_lossless && pgc_lossless[gi];
    // ingress: reserve first, then shared, or (lossless) headroom
    a_in_r = o_cells < pgc_reserve[gi] - g_r ? o_cells : pgc_reserve[gi] - g_r;
    a_rest = o_cells - a_in_r;
    if ((CNT_W + 1)'(pool_used[g_pool]) + (CNT_W + 1)'(a_rest) > (CNT_W + 1)'(cfg_pool_size[g_pool]))
      a_ing_v = V_POOL_FULL;
    else if (pgc_dyn[gi]) a_ing_v = TH_W'(g_s) < g_thr ? V_ADMIT : V_INGRESS_LIMIT;
    else a_ing_v = (CNT_W + 1)'(g_s) + (CNT_W + 1)'(a_rest) <= (CNT_W + 1)'(pgc_static[gi]) ? V_ADMIT : V_INGRESS_LIMIT;
    a_verdict = V_ADMIT;
    a_in_s = '0;
    a_hr = '0;
    if (a_rest != '0) begin
      if (a_ing_v == V_ADMIT) begin
        a_in_s = a_rest;
      end else if (a_lossless) begin
        if ((CNT_W + 1)'(g_h) + (CNT_W + 1)'(a_rest) <= (CNT_W + 1)'(pgc_hdrm[gi]) &&
            (cfg_shared_hdrm == '0 ||
             (CNT_W + 1)'(hdrm_used) + (CNT_W + 1)'(a_rest) <= (CNT_W + 1)'(cfg_shared_hdrm)))
          a_hr = a_rest;
        else a_verdict = V_HEADROOM_OVERFLOW;
      end else begin
        a_verdict = a_ing_v;
      end
    end
    // egress: reserve first; lossless packets are only accounted
    a_eg_r = o_cells < qc_reserve[qi] - q_r ? o_cells : qc_reserve[qi] - q_r;
    a_eg_s = o_cells - a_eg_r;
    if ((CNT_W + 1)'(pool_used[e_pool]) + (CNT_W + 1)'(a_eg_s) > (CNT_W + 1)'(cfg_pool_size[e_pool]))
      a_eg_v = V_POOL_FULL;
    else if (qc_dyn[qi]) a_eg_v = TH_W'(q_s) < q_thr ? V_ADMIT : V_EGRESS_LIMIT;
    else a_eg_v = (CNT_W + 1)'(q_s) + (CNT_W + 1)'(a_eg_s) <= (CNT_W + 1)'(qc_static[qi]) ? V_ADMIT : V_EGRESS_LIMIT;
    if (a_verdict == V_ADMIT && a_eg_s != '0 && !a_lossless) a_verdict = a_eg_v;
  end

  // Release (mmu::Mmu::release) of the head packet in S_DEQ_HEAD: headroom,
  // shared, reserve; queue shared, reserve
  logic [CNT_W-1:0] l_cells, l_hr, l_in_s, l_in_r, l_eg_s, l_eg_r;
  always_comb begin
    l_cells = d_cells[head_addr];
    l_hr = l_cells < g_h ? l_cells : g_h;
    l_in_s = l_cells - l_hr < g_s ? l_cells - l_hr : g_s;
    l_in_r = l_cells - l_hr - l_in_s;
    l_eg_s = l_cells < q_s ? l_cells : q_s;
    l_eg_r = l_cells - l_eg_s;
  end

  // PFC generator of the op's PG, on its state now (registered)
  logic [1:0] pfc_action;
  logic pfc_xoff_next;
  qm_pfc_gen #(.CNT_W(CNT_W), .LW(LW)) u_pfc (
      .xoff(pg_xoff[gi]), .dynamic_xoff(cfg_dyn_xoff), .xon_rule(cfg_xon_rule),
      .xoff_cells(LW'(cfg_xoff_cells)), .xon_offset(LW'(cfg_xon_offset)), .xon_cells(LW'(cfg_xon_cells)),
      .xon_ratio(cfg_xon_ratio), .shared(g_s), .headroom(g_h), .threshold(LW'(g_thr)),
      .in_headroom(state == S_ENQ_WALK && r_in_headroom), .action(pfc_action), .xoff_next(pfc_xoff_next));
  logic pfc_applies;  // the PG has a generator and the packet is lossless
  assign pfc_applies = r_lossless && cfg_pfc_en && cfg_pfc_pgs[gi[2:0]];

  // ECN marker of the op's queue, on the queue now (registered): before the
  // admit in S_ENQ_ADMIT, after the unlink and release in S_DEQ_WALK
  logic ecn_fired, ecn_mark, ecn_drew, ecn_hyst_next;
  logic [QW-1:0] ecn_q;
  assign ecn_q = cfg_ecn_unit[o_queue] == ECN_IN_CELLS ? QW'(q_r) + QW'(q_s) : QW'(q_bytes[qi]);
  qm_ecn #(.QW(QW), .EW(ECN_W)) u_ecn (
      .mode(cfg_ecn_mode[o_queue]), .k(cfg_ecn_k[o_queue]), .kmin(cfg_ecn_kmin[o_queue]),
      .kmax(cfg_ecn_kmax[o_queue]), .p32(cfg_ecn_p32[o_queue]), .k_high(cfg_ecn_khigh[o_queue]),
      .k_low(cfg_ecn_klow[o_queue]), .q(ecn_q), .ecn(o_ecn), .rand32(o_rand32), .hyst(q_hyst[qi]),
      .fired(ecn_fired), .mark(ecn_mark), .drew(ecn_drew), .hyst_next(ecn_hyst_next));
  logic ecn_enq, ecn_deq;  // the marker decides at this point
  assign ecn_enq = o_ecn_frame && cfg_ecn_mode[o_queue] != ECN_OFF && cfg_ecn_point[o_queue] == ECN_AT_ENQUEUE;
  assign ecn_deq = o_ecn_frame && !o_discard && cfg_ecn_mode[o_queue] != ECN_OFF &&
                   cfg_ecn_point[o_queue] == ECN_AT_DEQUEUE;

  // operation checks at acceptance
  logic op_ports_ok;
  always_comb begin
    unique case (op_kind)
      OP_ENQUEUE: op_ports_ok = (PW + 1)'(op_in_port) < cfg_ports && (PW + 1)'(op_out_port) < cfg_ports;
      OP_DEQUEUE: op_ports_ok = (PW + 1)'(op_out_port) < cfg_ports;
      OP_PFC_TICK: op_ports_ok = (PW + 1)'(op_in_port) < cfg_ports;
      default: op_ports_ok = 1'b0;
    endcase
  end

  logic [AW-1:0] cur_addr;
  assign cur_addr = r_cur;
  logic walk_last;
  assign walk_last = r_k == o_cells - 1'b1;

  // ---------------------------------------------------------------------------
  // The engine
  // ---------------------------------------------------------------------------
  task automatic set_error();
    res_error <= 1'b1;
    res_verdict <= V_ADMIT;
    res_head_cell <= NOCELL;
    res_pfc <= PFC_NONE;
    res_ecn_decided <= 1'b0;
    res_ecn_fired <= 1'b0;
    res_ecn_mark <= 1'b0;
    res_ecn_drew <= 1'b0;
  endtask

  always_ff @(posedge clk) begin
    if (rst) begin
      state <= S_IDLE;
      init_pending <= 1'b0;
      init_done <= 1'b0;
      init_i <= '0;
      cyc <= '0;
      res_valid <= 1'b0;
      res_kind <= OP_ENQUEUE;
      res_error <= 1'b0;
      res_verdict <= V_ADMIT;
      res_lossless <= 1'b0;
      res_in_headroom <= 1'b0;
      res_head_cell <= NOCELL;
      res_cells <= '0;
      res_bytes <= '0;
      res_in_port <= '0;
      res_pg <= '0;
      res_out_port <= '0;
      res_queue <= '0;
      res_in_pool <= '0;
      res_eg_pool <= '0;
      res_in_reserved <= '0;
      res_in_shared <= '0;
      res_headroom <= '0;
      res_eg_reserved <= '0;
      res_eg_shared <= '0;
      res_pg_reserved <= '0;
      res_pg_shared <= '0;
      res_pg_headroom <= '0;
      res_pg_threshold <= '0;
      res_pfc <= PFC_NONE;
      res_ecn_decided <= 1'b0;
      res_ecn_fired <= 1'b0;
      res_ecn_mark <= 1'b0;
      res_ecn_drew <= 1'b0;
      res_cycles <= '0;
      o_kind <= OP_ENQUEUE;
      o_in_port <= '0;
      o_out_port <= '0;
      o_pg <= '0;
      o_queue <= '0;
      o_cells <= '0;
      o_bytes <= '0;
      o_lossless <= 1'b0;
      o_ecn_frame <= 1'b0;
      o_discard <= 1'b0;
      o_ecn <= '0;
      o_rand32 <= '0;
      r_gi <= '0;
      r_lossless <= 1'b0;
      r_in_headroom <= 1'b0;
      r_head <= NOCELL;
      r_cur <= '0;
      r_k <= '0;
      free_head <= NOCELL;
      free_count <= '0;
      hdrm_used <= '0;
      pool_used <= '{default: '0};
      pg_rsv <= '{default: '0};
      pg_shr <= '{default: '0};
      pg_hdr <= '{default: '0};
      pg_xoff <= '{default: '0};
      q_rsv <= '{default: '0};
      q_shr <= '{default: '0};
      q_packets <= '{default: '0};
      q_bytes <= '{default: '0};
      q_head <= '{default: NOCELL};
      q_tail <= '{default: NOCELL};
      q_hyst <= '{default: '0};
    end else begin
      res_valid <= 1'b0;
      cyc <= cyc + 1'b1;
      if (csr_valid && csr_region == R_GLOBAL && csr_field == G_CTRL && csr_data[0]) init_pending <= 1'b1;

      unique case (state)
        S_IDLE:
          if (init_pending) begin
            // Soft reset of the dynamic state (the configuration stays), then
            // the free list 0, 1, .., total_cells - 1 built by a walk.
            init_pending <= 1'b0;
            init_done <= 1'b0;
            init_i <= '0;
            free_head <= cfg_total_cells != '0 ? '0 : NOCELL;
            free_count <= cfg_total_cells;
            hdrm_used <= '0;
            pool_used <= '{default: '0};
            pg_rsv <= '{default: '0};
            pg_shr <= '{default: '0};
            pg_hdr <= '{default: '0};
            pg_xoff <= '{default: '0};
            q_rsv <= '{default: '0};
            q_shr <= '{default: '0};
            q_packets <= '{default: '0};
            q_bytes <= '{default: '0};
            q_head <= '{default: NOCELL};
            q_tail <= '{default: NOCELL};
            q_hyst <= '{default: '0};
            state <= cfg_total_cells != '0 ? S_INIT : S_IDLE;
            init_done <= cfg_total_cells == '0;
          end else if (op_valid && op_ready) begin
            o_kind <= op_kind;
            o_in_port <= op_in_port;
            o_out_port <= op_out_port;
            o_pg <= op_pg;
            o_queue <= op_queue;
            o_cells <= op_cells;
            o_bytes <= op_bytes;
            o_lossless <= op_lossless;
            o_ecn_frame <= op_ecn_frame;
            o_discard <= op_discard;
            o_ecn <= op_ecn;
            o_rand32 <= op_rand32;
            r_gi <= {op_in_port, op_pg};
            cyc <= 16'd1;
            res_error <= 1'b0;
            if (!op_ports_ok || (op_kind == OP_ENQUEUE && op_cells == '0)) begin
              // malformed: an error result after one cycle, nothing changes
              state <= S_TICK;
              res_error <= 1'b1;
            end else begin
              unique case (op_kind)
                OP_ENQUEUE: state <= S_ENQ_ADMIT;
                OP_DEQUEUE: state <= S_DEQ_HEAD;
                default: state <= S_TICK;
              endcase
            end
          end

        S_INIT: begin
          next_mem[init_i[AW-1:0]] <= init_i + 1'b1 < cfg_total_cells ? CW'(init_i + 1'b1) : NOCELL;
          init_i <= init_i + 1'b1;
          if (init_i + 1'b1 >= cfg_total_cells || 32'(init_i) + 1 >= CELLS) begin
            state <= S_IDLE;
            init_done <= 1'b1;
          end
        end

        S_ENQ_ADMIT: begin
          res_kind <= OP_ENQUEUE;
          res_lossless <= a_lossless;
          res_cells <= o_cells;
          res_bytes <= o_bytes;
          res_in_port <= o_in_port;
          res_pg <= o_pg;
          res_out_port <= o_out_port;
          res_queue <= o_queue;
          res_in_pool <= g_pool;
          res_eg_pool <= e_pool;
          res_pfc <= PFC_NONE;
          if (a_verdict != V_ADMIT || free_count < o_cells) begin
            // dropped (or no cells: the configuration broke mmu::validate's bound)
            res_error <= a_verdict == V_ADMIT;
            res_verdict <= a_verdict;
            res_in_headroom <= 1'b0;
            res_head_cell <= NOCELL;
            res_in_reserved <= '0;
            res_in_shared <= '0;
            res_headroom <= '0;
            res_eg_reserved <= '0;
            res_eg_shared <= '0;
            res_pg_reserved <= g_r;
            res_pg_shared <= g_s;
            res_pg_headroom <= g_h;
            res_pg_threshold <= g_thr;
            res_ecn_decided <= 1'b0;
            res_ecn_fired <= 1'b0;
            res_ecn_mark <= 1'b0;
            res_ecn_drew <= 1'b0;
            res_cycles <= cyc;
            res_valid <= 1'b1;
            state <= S_IDLE;
          end else begin
            // commit the charge
            pg_rsv[gi] <= g_r + a_in_r;
            pg_shr[gi] <= g_s + a_in_s;
            pg_hdr[gi] <= g_h + a_hr;
            q_rsv[qi] <= q_r + a_eg_r;
            q_shr[qi] <= q_s + a_eg_s;
            for (int p = 0; p < POOLS; p++)
              pool_used[p] <= pool_used[p] + (PLW'(p) == g_pool ? a_in_s : '0) + (PLW'(p) == e_pool ? a_eg_s : '0);
            if (cfg_shared_hdrm != '0) hdrm_used <= hdrm_used + a_hr;
            r_lossless <= a_lossless;
            r_in_headroom <= a_hr != '0;
            res_verdict <= V_ADMIT;
            res_in_headroom <= a_hr != '0;
            res_in_reserved <= a_in_r;
            res_in_shared <= a_in_s;
            res_headroom <= a_hr;
            res_eg_reserved <= a_eg_r;
            res_eg_shared <= a_eg_s;
            // ECN on the queue as the packet finds it
            res_ecn_decided <= ecn_enq;
            res_ecn_fired <= ecn_enq && ecn_fired;
            res_ecn_mark <= ecn_enq && ecn_mark;
            res_ecn_drew <= ecn_enq && ecn_drew;
            if (ecn_enq) q_hyst[qi] <= ecn_hyst_next;
            // the chain starts at the free list's head
            r_head <= free_head;
            r_cur <= free_head[AW-1:0];
            r_k <= '0;
            res_head_cell <= free_head;
            state <= S_ENQ_WALK;
          end
        end

        S_ENQ_WALK: begin
          if (r_k == '0) begin
            // PFC on the PG after the admit
            if (pfc_applies) begin
              pg_xoff[gi] <= pfc_xoff_next;
              res_pfc <= pfc_action;
            end
            res_pg_reserved <= g_r;
            res_pg_shared <= g_s;
            res_pg_headroom <= g_h;
            res_pg_threshold <= g_thr;
          end
          if (walk_last) begin
            // the chain ends here; the free list continues after it
            next_mem[cur_addr] <= NOCELL;
            free_head <= next_mem[cur_addr];
            free_count <= free_count - o_cells;
            // the descriptor, and the packet at its queue's tail
            d_cells[r_head[AW-1:0]] <= o_cells;
            d_bytes[r_head[AW-1:0]] <= o_bytes;
            d_in_port[r_head[AW-1:0]] <= o_in_port;
            d_pg[r_head[AW-1:0]] <= o_pg;
            if (q_packets[qi] == '0) q_head[qi] <= r_head;
            else d_next_pkt[q_tail[qi][AW-1:0]] <= r_head;
            q_tail[qi] <= r_head;
            q_packets[qi] <= q_packets[qi] + 1'b1;
            q_bytes[qi] <= q_bytes[qi] + o_bytes;
            res_cycles <= cyc;
            res_valid <= 1'b1;
            state <= S_IDLE;
          end else begin
            r_cur <= next_mem[cur_addr][AW-1:0];
            r_k <= r_k + 1'b1;
          end
        end

        S_DEQ_HEAD: begin
          res_kind <= OP_DEQUEUE;
          res_pfc <= PFC_NONE;
          if (q_packets[qi] == '0) begin
            set_error();
            res_cycles <= cyc;
            res_valid <= 1'b1;
            state <= S_IDLE;
          end else begin
            // unlink
            if (q_packets[qi] == 1) begin
              q_head[qi] <= NOCELL;
              q_tail[qi] <= NOCELL;
            end else begin
              q_head[qi] <= d_next_pkt[head_addr];
            end
            q_packets[qi] <= q_packets[qi] - 1'b1;
            q_bytes[qi] <= q_bytes[qi] - d_bytes[head_addr];
            // release
            pg_hdr[gi] <= g_h - l_hr;
            pg_shr[gi] <= g_s - l_in_s;
            pg_rsv[gi] <= g_r - l_in_r;
            q_shr[qi] <= q_s - l_eg_s;
            q_rsv[qi] <= q_r - l_eg_r;
            for (int p = 0; p < POOLS; p++)
              pool_used[p] <= pool_used[p] - (PLW'(p) == g_pool ? l_in_s : '0) - (PLW'(p) == e_pool ? l_eg_s : '0);
            if (cfg_shared_hdrm != '0) hdrm_used <= hdrm_used - l_hr;
            r_gi <= d_gi;
            r_lossless <= pgc_lossless[d_gi];
            r_head <= q_head[qi];
            r_cur <= head_addr;
            r_k <= '0;
            o_cells <= l_cells;
            res_verdict <= V_ADMIT;
            res_lossless <= pgc_lossless[d_gi];
            res_in_headroom <= 1'b0;
            res_head_cell <= q_head[qi];
            res_cells <= l_cells;
            res_bytes <= d_bytes[head_addr];
            res_in_port <= d_in_port[head_addr];
            res_pg <= d_pg[head_addr];
            res_out_port <= o_out_port;
            res_queue <= o_queue;
            res_in_pool <= g_pool;
            res_eg_pool <= e_pool;
            res_in_reserved <= l_in_r;
            res_in_shared <= l_in_s;
            res_headroom <= l_hr;
            res_eg_reserved <= l_eg_r;
            res_eg_shared <= l_eg_s;
            state <= S_DEQ_WALK;
          end
        end

        S_DEQ_WALK: begin
          if (r_k == '0) begin
            // PFC on the PG after the release; ECN on the queue left behind
            if (pfc_applies) begin
              pg_xoff[gi] <= pfc_xoff_next;
              res_pfc <= pfc_action;
            end
            res_pg_reserved <= g_r;
            res_pg_shared <= g_s;
            res_pg_headroom <= g_h;
            res_pg_threshold <= g_thr;
            res_ecn_decided <= ecn_deq;
            res_ecn_fired <= ecn_deq && ecn_fired;
            res_ecn_mark <= ecn_deq && ecn_mark;
            res_ecn_drew <= ecn_deq && ecn_drew;
            if (ecn_deq) q_hyst[qi] <= ecn_hyst_next;
          end
          if (walk_last) begin
            // the chain, whole, onto the free list: its head is handed out next
            next_mem[cur_addr] <= free_head;
            free_head <= r_head;
            free_count <= free_count + o_cells;
            res_cycles <= cyc;
            res_valid <= 1'b1;
            state <= S_IDLE;
          end else begin
            r_cur <= next_mem[cur_addr][AW-1:0];
            r_k <= r_k + 1'b1;
          end
        end

        S_TICK: begin
          // pfc_tick, or a malformed op (res_error set at acceptance)
          res_kind <= o_kind;
          res_verdict <= V_ADMIT;
          res_head_cell <= NOCELL;
          res_ecn_decided <= 1'b0;
          res_ecn_fired <= 1'b0;
          res_ecn_mark <= 1'b0;
          res_ecn_drew <= 1'b0;
          res_pfc <= PFC_NONE;
          res_in_port <= o_in_port;
          res_pg <= o_pg;
          res_pg_reserved <= g_r;
          res_pg_shared <= g_s;
          res_pg_headroom <= g_h;
          res_pg_threshold <= g_thr;
          if (!res_error && pg_xoff[gi]) begin
            pg_xoff[gi] <= pfc_xoff_next;
            res_pfc <= pfc_action;
          end
          res_cycles <= cyc;
          res_valid <= 1'b1;
          state <= S_IDLE;
        end

        default: state <= S_IDLE;
      endcase
    end
  end

  // ---------------------------------------------------------------------------
  // Reads
  // ---------------------------------------------------------------------------
  assign rd_q_head = q_head[rd_qidx];
  assign rd_q_tail = q_tail[rd_qidx];
  assign rd_q_packets = q_packets[rd_qidx];
  assign rd_q_bytes = q_bytes[rd_qidx];
  assign rd_q_reserved = q_rsv[rd_qidx];
  assign rd_q_shared = q_shr[rd_qidx];
  assign rd_q_hyst = q_hyst[rd_qidx];
  assign rd_pg_reserved = pg_rsv[rd_qidx];
  assign rd_pg_shared = pg_shr[rd_qidx];
  assign rd_pg_headroom = pg_hdr[rd_qidx];
  assign rd_pg_xoff = pg_xoff[rd_qidx];
  assign rd_next_cell = next_mem[rd_cell];
  assign rd_pool_used = pool_used[rd_pool];
  assign rd_free_head = free_head;
  assign rd_free_count = free_count;
  assign rd_hdrm_used = hdrm_used;
  qm_threshold #(.CNT_W(CNT_W)) u_rd_thr_pg (
      .dynamic(pgc_dyn[rd_qidx]), .shift(pgc_shift[rd_qidx]), .static_cells(pgc_static[rd_qidx]),
      .pool_used(pool_used[pgc_pool[rd_qidx]]), .pool_size(cfg_pool_size[pgc_pool[rd_qidx]]),
      .threshold(rd_pg_threshold));
  qm_threshold #(.CNT_W(CNT_W)) u_rd_thr_q (
      .dynamic(qc_dyn[rd_qidx]), .shift(qc_shift[rd_qidx]), .static_cells(qc_static[rd_qidx]),
      .pool_used(pool_used[qc_pool[rd_qidx]]), .pool_size(cfg_pool_size[qc_pool[rd_qidx]]),
      .threshold(rd_q_threshold));
endmodule
