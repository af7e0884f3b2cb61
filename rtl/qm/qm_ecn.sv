// The ECN decision of one egress queue: ecn::Marker::decide (tlm/ecn/marker.h),
// combinational, with the WRED random word an input. The caller registers
// hyst_next when it makes the decision.
//   threshold:  fires iff q > k
//   wred:       q > kmax fires; kmin < q <= kmax draws and fires iff
//               r * (kmax - kmin) < (q - kmin) * P32 (exact in W + 32 bits:
//               r < 2^32, kmax - kmin < 2^W; q - kmin < 2^W, P32 <= 2^32)
//   hysteresis: q > k_high sets the flag, q < k_low clears it; fires iff set
module qm_ecn #(
    parameter int QW = 32,  // queue length
    parameter int EW = 32   // thresholds
) (
    input  logic [1:0]    mode,  // qm_pkg::ECN_*
    input  logic [EW-1:0] k,
    input  logic [EW-1:0] kmin,
    input  logic [EW-1:0] kmax,
    input  logic [32:0]   p32,
    input  logic [EW-1:0] k_high,
    input  logic [EW-1:0] k_low,
    input  logic [QW-1:0] q,
    input  logic [1:0]    ecn,     // codepoint
    input  logic [31:0]   rand32,
    input  logic          hyst,
    output logic          fired,
    output logic          mark,
    output logic          drew,
    output logic          hyst_next
);
  import qm_pkg::*;
  localparam int W = QW > EW ? QW : EW;
  logic [W-1:0] qx, ramp, over;
  logic [W+31:0] lhs, rhs;

  always_comb begin
    qx = W'(q);
    ramp = W'(kmax) - W'(kmin);
    over = qx - W'(kmin);
    lhs = (W + 32)'(rand32) * (W + 32)'(ramp);
    rhs = (W + 32)'(over) * (W + 32)'(p32);
    fired = 1'b0;
    drew = 1'b0;
    hyst_next = hyst;
    unique case (mode)
      ECN_THRESHOLD: fired = qx > W'(k);
      ECN_WRED:
        if (qx > W'(kmax)) begin
          fired = 1'b1;
        end else if (qx > W'(kmin)) begin
          drew = 1'b1;
          fired = lhs < rhs;
        end
      ECN_HYSTERESIS: begin
        if (qx > W'(k_high)) hyst_next = 1'b1;
        else if (qx < W'(k_low)) hyst_next = 1'b0;
        fired = hyst_next;
      end
      default: ;  // ECN_OFF
    endcase
    mark = fired && (ecn == 2'b01 || ecn == 2'b10);
  end
endmodule
