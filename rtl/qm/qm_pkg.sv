// Encodings shared by the queue manager RTL and its C++ driver
// (rtl/tests/qm_driver.h). Every value equals the C++ enum it mirrors
// (tlm/qm/queue_manager.h, tlm/mmu/mmu.h, tlm/ecn/config.h, tlm/pfc/pfc.h).
package qm_pkg;
  // op_kind
  localparam logic [1:0] OP_ENQUEUE = 2'd0;
  localparam logic [1:0] OP_DEQUEUE = 2'd1;
  localparam logic [1:0] OP_PFC_TICK = 2'd2;

  // mmu::Verdict
  localparam logic [2:0] V_ADMIT = 3'd0;
  localparam logic [2:0] V_INGRESS_LIMIT = 3'd1;
  localparam logic [2:0] V_EGRESS_LIMIT = 3'd2;
  localparam logic [2:0] V_POOL_FULL = 3'd3;
  localparam logic [2:0] V_HEADROOM_OVERFLOW = 3'd4;

  // qm::PfcAction
  localparam logic [1:0] PFC_NONE = 2'd0;
  localparam logic [1:0] PFC_XOFF = 2'd1;
  localparam logic [1:0] PFC_XON = 2'd2;

  // pfc::GeneratorConfig::XonRule
  localparam logic [1:0] XON_OFFSET = 2'd0;
  localparam logic [1:0] XON_ABSOLUTE = 2'd1;
  localparam logic [1:0] XON_RATIO = 2'd2;

  // ecn::MarkerConfig::Mode / Point / Unit
  localparam logic [1:0] ECN_OFF = 2'd0;
  localparam logic [1:0] ECN_THRESHOLD = 2'd1;
  localparam logic [1:0] ECN_WRED = 2'd2;
  localparam logic [1:0] ECN_HYSTERESIS = 2'd3;
  localparam logic ECN_AT_ENQUEUE = 1'b0;
  localparam logic ECN_AT_DEQUEUE = 1'b1;
  localparam logic ECN_IN_BYTES = 1'b0;
  localparam logic ECN_IN_CELLS = 1'b1;

  // CSR address: {region[23:20], index[19:8], sub[7:5], field[4:0]}
  localparam logic [3:0] R_GLOBAL = 4'd0;  // field = register below (index, sub 0)
  localparam logic [3:0] R_POOL = 4'd1;    // index = pool; field 0: size (cells)
  localparam logic [3:0] R_ECN = 4'd2;     // sub = queue index (all ports alike); field below
  localparam logic [3:0] R_PG = 4'd3;      // index = port, sub = PG; field below
  localparam logic [3:0] R_QUEUE = 4'd4;   // index = port, sub = queue; field below

  // R_GLOBAL fields
  localparam logic [4:0] G_CTRL = 5'd0;         // write bit 0 = 1: build the free list, clear all state
  localparam logic [4:0] G_TOTAL_CELLS = 5'd1;  // cells in use (<= CELLS)
  localparam logic [4:0] G_PORTS = 5'd2;        // configured ports (<= P)
  localparam logic [4:0] G_SHARED_HDRM = 5'd3;  // shared headroom pool (cells); 0 = per-PG headroom
  localparam logic [4:0] G_PFC_CTRL = 5'd4;     // [0] enabled [1] dynamic_xoff [3:2] xon_rule [15:8] PG mask
  localparam logic [4:0] G_PFC_XOFF = 5'd5;     // xoff_cells
  localparam logic [4:0] G_PFC_XON_OFFSET = 5'd6;
  localparam logic [4:0] G_PFC_XON_CELLS = 5'd7;
  localparam logic [4:0] G_PFC_XON_RATIO = 5'd8; // xon_ratio_q16 (0 .. 2^16)

  // R_ECN fields
  localparam logic [4:0] E_MODE = 5'd0;    // [1:0] mode [2] point [3] unit
  localparam logic [4:0] E_K = 5'd1;
  localparam logic [4:0] E_KMIN = 5'd2;
  localparam logic [4:0] E_KMAX = 5'd3;
  localparam logic [4:0] E_P32_LO = 5'd4;  // P32 bits 31:0
  localparam logic [4:0] E_P32_HI = 5'd5;  // P32 bit 32 (in bit 0)
  localparam logic [4:0] E_K_HIGH = 5'd6;
  localparam logic [4:0] E_K_LOW = 5'd7;

  // R_PG / R_QUEUE fields
  localparam logic [4:0] L_FLAGS = 5'd0;     // [0] lossless (PG only) [1] dynamic [7:4] shift n (signed) [15:8] pool
  localparam logic [4:0] L_RESERVE = 5'd1;
  localparam logic [4:0] L_STATIC = 5'd2;
  localparam logic [4:0] L_HEADROOM = 5'd3;  // PG only
endpackage
