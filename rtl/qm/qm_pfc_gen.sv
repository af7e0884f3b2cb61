// XOFF/XON decision of one (port, PG) with hysteresis: pfc::Generator::update
// (tlm/pfc/pfc.h), integer compares, combinational. The caller registers
// xoff_next when it evaluates the generator.
module qm_pfc_gen #(
    parameter int CNT_W = 20,
    parameter int LW = 32  // width of the XOFF level and the configured thresholds
) (
    input  logic             xoff,          // the PG's state before the evaluation
    input  logic             dynamic_xoff,  // XOFF level: the MMU threshold, else xoff_cells
    input  logic [1:0]       xon_rule,      // qm_pkg::XON_*
    input  logic [LW-1:0]    xoff_cells,
    input  logic [LW-1:0]    xon_offset,
    input  logic [LW-1:0]    xon_cells,
    input  logic [16:0]      xon_ratio,     // q16, 0 .. 2^16
    input  logic [CNT_W-1:0] shared,
    input  logic [CNT_W-1:0] headroom,
    input  logic [LW-1:0]    threshold,
    input  logic             in_headroom,   // the packet just admitted went (partly) to headroom
    output logic [1:0]       action,        // qm_pkg::PFC_*
    output logic             xoff_next
);
  import qm_pkg::*;
  logic [LW-1:0] level;
  logic resume;

  always_comb begin
    level = dynamic_xoff ? threshold : xoff_cells;
    unique case (xon_rule)
      XON_ABSOLUTE: resume = LW'(shared) <= xon_cells;
      XON_RATIO: resume = (LW + 17)'({shared, 16'b0}) <= (LW + 17)'(xon_ratio) * (LW + 17)'(level);
      default: resume = (LW + 1)'(shared) + (LW + 1)'(xon_offset) < (LW + 1)'(level);  // XON_OFFSET
    endcase
    action = PFC_NONE;
    xoff_next = xoff;
    if (!xoff) begin
      if (in_headroom || headroom != '0 || LW'(shared) >= level) begin
        action = PFC_XOFF;
        xoff_next = 1'b1;
      end
    end else if (headroom == '0 && resume) begin
      action = PFC_XON;
      xoff_next = 1'b0;
    end
  end
endmodule
