// The shared-use limit of one PG or queue (tlm/mmu/mmu.h): dynamic
// alpha * (pool size - pool used) with alpha = 2^n as a shift (floor for
// n < 0, free cells saturating at 0), or the static value. Combinational.
module qm_threshold #(
    parameter int CNT_W = 20
) (
    input  logic               dynamic,
    input  logic signed [3:0]  shift,         // n in [-7, 7]
    input  logic [CNT_W-1:0]   static_cells,
    input  logic [CNT_W-1:0]   pool_used,
    input  logic [CNT_W-1:0]   pool_size,
    output logic [CNT_W+6:0]   threshold
);
  logic [CNT_W-1:0] free_cells, scaled_down;
  logic [3:0] right;

  always_comb begin
    free_cells = pool_used < pool_size ? pool_size - pool_used : '0;
    right = -shift;
    scaled_down = free_cells >> right;
    if (!dynamic) threshold = (CNT_W + 7)'(static_cells);
    else if (!shift[3]) threshold = (CNT_W + 7)'(free_cells) << shift[2:0];
    else threshold = (CNT_W + 7)'(scaled_down);
  end
endmodule
