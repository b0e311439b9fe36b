// Behavioural MULT18X18D for cosim of the MRC_ECP5_DSP branch of arith::PipeMul only: the
// subset that branch uses (unsigned A x B, C unused, output register on CLK0 with CE0 / RST0
// synchronous, every other register bypassed). Not a model of the primitive in general.
module MULT18X18D(
    input A0, A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14, A15, A16, A17,
    input B0, B1, B2, B3, B4, B5, B6, B7, B8, B9, B10, B11, B12, B13, B14, B15, B16, B17,
    input C0, C1, C2, C3, C4, C5, C6, C7, C8, C9, C10, C11, C12, C13, C14, C15, C16, C17,
    input SIGNEDA, SIGNEDB, SOURCEA, SOURCEB, CLK0, CE0, RST0,
    output P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17,
    output P18, P19, P20, P21, P22, P23, P24, P25, P26, P27, P28, P29, P30, P31, P32, P33, P34,
    output P35
);
    parameter REG_OUTPUT_CLK = "NONE";
    parameter REG_OUTPUT_CE = "CE0";
    parameter REG_OUTPUT_RST = "RST0";
    parameter RESETMODE = "SYNC";
    wire [17:0] a = {A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0};
    wire [17:0] b = {B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0};
    reg [35:0] p;
    always @(posedge CLK0) begin
        if (RST0) p <= 36'd0;
        else if (CE0) p <= {18'd0, a} * {18'd0, b};
    end
    assign {P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19,
            P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0} = p;
    // The branch relies on the output register; anything else is not modelled.
    initial if (REG_OUTPUT_CLK != "CLK0") $fatal(1, "MULT18X18D_sim: only REG_OUTPUT_CLK=CLK0");
    wire _unused = &{1'b0, C0, C1, C2, C3, C4, C5, C6, C7, C8, C9, C10, C11, C12, C13, C14, C15,
                     C16, C17, SIGNEDA, SIGNEDB, SOURCEA, SOURCEB};
endmodule
