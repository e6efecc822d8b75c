/*
 * cfi_frames.S - hand-written call frame information for test_cfi.c.
 * Never executed: test_cfi.c unwinds a made-up stack through these rules.
 *   t_plain  CFA = rsp + 16, rbp at CFA - 16, return address at CFA - 8
 *   t_rbp    CFA = rbp + 16
 *   t_expr   CFA by expression: rsp + 32, through a taken DW_OP_bra that
 *            skips a DW_OP_deref; return address at an expression, CFA - 24
 *   t_bad    CFA expression branching outside itself
 *   t_root   return address undefined: the outermost frame
 *   t_nocfi  no CFI at all, but a frame pointer, as crt's
 *            __do_global_dtors_aux
 */
    .text
    .globl t_plain, t_plain_pc, t_rbp_ret, t_expr_ret, t_root_ret, t_bad_pc
    .globl t_nocfi_pc, t_nocfi_ret
    .type t_plain, @function
t_plain:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
t_plain_pc:
    nop
    pop %rbp
    .cfi_def_cfa_offset 8
    ret
    .cfi_endproc

    .type t_rbp, @function
t_rbp:
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp
    .cfi_def_cfa_register %rbp
    call t_plain
t_rbp_ret:
    leave
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc

    .type t_expr, @function
t_expr:
    .cfi_startproc
    sub $24, %rsp
    /* DW_CFA_def_cfa_expression: breg7 0; plus_uconst 32; lit1; bra +1;
     * deref (skipped); nop */
    .cfi_escape 0x0f, 10, 0x77, 0x00, 0x23, 0x20, 0x31, 0x28, 0x01, 0x00, 0x06, 0x96
    /* DW_CFA_expression r16 (return address): CFA (pushed); const1u 24; minus */
    .cfi_escape 0x10, 0x10, 3, 0x08, 0x18, 0x1c
    call t_rbp
t_expr_ret:
    nop
    add $24, %rsp
    ret
    .cfi_endproc

    .type t_bad, @function
t_bad:
    .cfi_startproc
    /* DW_CFA_def_cfa_expression: breg7 0; lit1; bra +100 (outside) */
    .cfi_escape 0x0f, 6, 0x77, 0x00, 0x31, 0x28, 0x64, 0x00
t_bad_pc:
    nop
    ret
    .cfi_endproc

    .type t_root, @function
t_root:
    .cfi_startproc
    .cfi_undefined %rip
    call t_expr
t_root_ret:
    nop
    ret
    .cfi_endproc

    .type t_nocfi, @function
t_nocfi:
    push %rbp
    mov %rsp, %rbp
t_nocfi_pc:
    call t_plain
t_nocfi_ret:
    pop %rbp
    ret

    .section .note.GNU-stack, "", @progbits
