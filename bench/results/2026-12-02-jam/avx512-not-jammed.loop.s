	vbroadcastss	(%rcx,%rax), %zmm21
	vfmadd213ps	2048(%rcx,%rax), %zmm5, %zmm21 # zmm21 = (zmm5 * zmm21) + mem
	vfmadd231ps	4(%rcx,%rax){1to16}, %zmm6, %zmm21 # zmm21 = (zmm6 * mem) + zmm21
	vfmadd231ps	8(%rcx,%rax){1to16}, %zmm7, %zmm21 # zmm21 = (zmm7 * mem) + zmm21
	vfmadd231ps	12(%rcx,%rax){1to16}, %zmm8, %zmm21 # zmm21 = (zmm8 * mem) + zmm21
	vfmadd231ps	16(%rcx,%rax){1to16}, %zmm9, %zmm21 # zmm21 = (zmm9 * mem) + zmm21
	vfmadd231ps	20(%rcx,%rax){1to16}, %zmm10, %zmm21 # zmm21 = (zmm10 * mem) + zmm21
	vfmadd231ps	24(%rcx,%rax){1to16}, %zmm11, %zmm21 # zmm21 = (zmm11 * mem) + zmm21
	vfmadd231ps	28(%rcx,%rax){1to16}, %zmm12, %zmm21 # zmm21 = (zmm12 * mem) + zmm21
	vfmadd231ps	32(%rcx,%rax){1to16}, %zmm13, %zmm21 # zmm21 = (zmm13 * mem) + zmm21
	vfmadd231ps	36(%rcx,%rax){1to16}, %zmm14, %zmm21 # zmm21 = (zmm14 * mem) + zmm21
	vfmadd231ps	40(%rcx,%rax){1to16}, %zmm15, %zmm21 # zmm21 = (zmm15 * mem) + zmm21
	vfmadd231ps	44(%rcx,%rax){1to16}, %zmm16, %zmm21 # zmm21 = (zmm16 * mem) + zmm21
	vfmadd231ps	48(%rcx,%rax){1to16}, %zmm17, %zmm21 # zmm21 = (zmm17 * mem) + zmm21
	vfmadd231ps	52(%rcx,%rax){1to16}, %zmm18, %zmm21 # zmm21 = (zmm18 * mem) + zmm21
	vfmadd231ps	56(%rcx,%rax){1to16}, %zmm19, %zmm21 # zmm21 = (zmm19 * mem) + zmm21
	vfmadd231ps	60(%rcx,%rax){1to16}, %zmm20, %zmm21 # zmm21 = (zmm20 * mem) + zmm21
	vmovaps	%zmm21, 2048(%rcx,%rax)
	addq	$64, %rax
	cmpq	$1024, %rax                     # imm = 0x400
	jne	.LBB0_23
