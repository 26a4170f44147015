/* fused_program.h - the program of a fused element-wise kernel call. */
/*
 * `tidal.fused_elementwise` (tidal-fuse-elementwise, cpu target) computes a
 * chain of float32 element-wise ops in one kernel call and one pass over
 * memory: tidalrt_k_fused_elementwise reads the op's inputs, runs the
 * program on cache-sized tiles of elements and writes the op's results.
 *
 * Registers: 0 .. numInputs-1 are the inputs (a tensor of the results' shape,
 * or a one-element tensor read as a broadcast scalar); step k of the program
 * defines register numInputs + k, a tensor of the results' shape. The
 * `program` attribute holds TIDALRT_FUSED_WORDS words per step:
 *
 *   opcode (tidalrt_fused_opcode_t), operand a, operand b (-1 for one-operand
 *   steps), parameter (IEEE float32 bits: leaky_relu's alpha, else 0)
 *
 * Operands name earlier registers only. One-operand steps (unary ops) and
 * both operands of the activation backward steps (a = grad, b = saved) read
 * full tensors; a binary step may read one broadcast scalar. The `outputs`
 * attribute gives, per result of the op, the register it holds. Every step
 * computes what the op it replaces computes, bit for bit (the same vector
 * loops, runtime/src/cpu/simd.h).
 */
#ifndef TIDALRT_FUSED_PROGRAM_H
#define TIDALRT_FUSED_PROGRAM_H

#define TIDALRT_FUSED_WORDS 4

typedef enum tidalrt_fused_opcode_t {
  /* two operands: a op b */
  TIDALRT_FUSED_ADD = 1,
  TIDALRT_FUSED_SUB = 2,
  TIDALRT_FUSED_MUL = 3,
  TIDALRT_FUSED_DIV = 4,
  /* one operand: f(a) */
  TIDALRT_FUSED_NEG = 10,
  TIDALRT_FUSED_RELU = 11,
  TIDALRT_FUSED_SIGMOID = 12,
  TIDALRT_FUSED_TANH = 13,
  TIDALRT_FUSED_SQRT = 14,
  TIDALRT_FUSED_ERF = 15,
  TIDALRT_FUSED_EXP = 16,
  TIDALRT_FUSED_LOG = 17,
  TIDALRT_FUSED_LEAKY_RELU = 18,
  TIDALRT_FUSED_GELU = 19,
  /* activation backward: a = grad, b = saved (see the *_backward ops) */
  TIDALRT_FUSED_RELU_BACKWARD = 30,
  TIDALRT_FUSED_LEAKY_RELU_BACKWARD = 31,
  TIDALRT_FUSED_SIGMOID_BACKWARD = 32,
  TIDALRT_FUSED_TANH_BACKWARD = 33,
  TIDALRT_FUSED_ERF_BACKWARD = 34,
  TIDALRT_FUSED_GELU_BACKWARD = 35
} tidalrt_fused_opcode_t;

/* Limits the compiler respects and the kernel checks. */
#define TIDALRT_FUSED_MAX_STEPS 32
#define TIDALRT_FUSED_MAX_INPUTS 16
#define TIDALRT_FUSED_MAX_OUTPUTS 8

#endif /* TIDALRT_FUSED_PROGRAM_H */
