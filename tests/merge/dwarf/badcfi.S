/* Two functions whose CFI is wrong on purpose, for the DWARF unwinder's
 * bad-input tests.  Both just count %rdi down to zero.
 *
 * cfi_loop_frame: says the caller's pc and sp are this frame's own, so a
 *   naive unwinder steps to the same frame forever.
 * cfi_loop_expr: its CFA is a DWARF expression that jumps to itself
 *   (DW_OP_skip -3), so a naive evaluator never returns. */
        .text
        .globl  cfi_loop_frame
        .type   cfi_loop_frame, @function
cfi_loop_frame:
        .cfi_startproc
        .cfi_same_value rip
        .cfi_val_offset rsp, -8
1:      dec     %rdi
        jnz     1b
        ret
        .cfi_endproc
        .size   cfi_loop_frame, .-cfi_loop_frame

        .globl  cfi_loop_expr
        .type   cfi_loop_expr, @function
cfi_loop_expr:
        .cfi_startproc
        /* DW_CFA_def_cfa_expression, 3 bytes: DW_OP_skip, -3 */
        .cfi_escape 0x0f, 0x03, 0x2f, 0xfd, 0xff
1:      dec     %rdi
        jnz     1b
        ret
        .cfi_endproc
        .size   cfi_loop_expr, .-cfi_loop_expr

        .section .note.GNU-stack,"",@progbits
