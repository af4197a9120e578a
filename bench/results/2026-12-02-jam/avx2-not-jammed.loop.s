	movq	%rdi, %rsi
	shlq	$6, %rsi
	vbroadcastss	56(%rbx,%rsi), %ymm0
	vbroadcastss	52(%rbx,%rsi), %ymm1
	vbroadcastss	44(%rbx,%rsi), %ymm2
	vbroadcastss	40(%rbx,%rsi), %ymm4
	vbroadcastss	36(%rbx,%rsi), %ymm6
	vbroadcastss	32(%rbx,%rsi), %ymm5
	vmovups	%ymm5, 240(%rsp)
	vbroadcastss	24(%rbx,%rsi), %ymm7
	vbroadcastss	20(%rbx,%rsi), %ymm8
	vbroadcastss	16(%rbx,%rsi), %ymm9
	vbroadcastss	12(%rbx,%rsi), %ymm10
	vbroadcastss	4(%rbx,%rsi), %ymm11
	vbroadcastss	(%rbx,%rsi), %ymm3
	vmovaps	2048(%rbx,%rsi), %ymm15
	vbroadcastss	8(%rbx,%rsi), %ymm12
	vfmadd231ps	1264(%rsp), %ymm3, %ymm15
	vfmadd231ps	1200(%rsp), %ymm11, %ymm15
	vfmadd231ps	1136(%rsp), %ymm12, %ymm15
	vfmadd231ps	1104(%rsp), %ymm10, %ymm15
	vfmadd231ps	1072(%rsp), %ymm9, %ymm15
	vbroadcastss	28(%rbx,%rsi), %ymm13
	vfmadd231ps	1040(%rsp), %ymm8, %ymm15
	vfmadd231ps	1008(%rsp), %ymm7, %ymm15
	vfmadd231ps	976(%rsp), %ymm13, %ymm15
	vfmadd231ps	944(%rsp), %ymm5, %ymm15
	vfmadd231ps	912(%rsp), %ymm6, %ymm15
	vbroadcastss	48(%rbx,%rsi), %ymm14
	vfmadd231ps	880(%rsp), %ymm4, %ymm15
	vmovaps	%ymm4, %ymm5
	vfmadd231ps	848(%rsp), %ymm2, %ymm15
	vmovaps	%ymm2, %ymm4
	vfmadd231ps	816(%rsp), %ymm14, %ymm15
	vfmadd231ps	784(%rsp), %ymm1, %ymm15
	vmovaps	%ymm1, %ymm2
	vfmadd231ps	752(%rsp), %ymm0, %ymm15
	vmovaps	%ymm0, %ymm1
	vbroadcastss	60(%rbx,%rsi), %ymm0
	vfmadd231ps	720(%rsp), %ymm0, %ymm15
	vmovaps	%ymm15, 2048(%rbx,%rsi)
	vmovups	1232(%rsp), %ymm15
	vfmadd213ps	2080(%rbx,%rsi), %ymm15, %ymm3
	vfmadd231ps	1168(%rsp), %ymm11, %ymm3
	vfmadd231ps	688(%rsp), %ymm12, %ymm3
	vfmadd231ps	656(%rsp), %ymm10, %ymm3
	vfmadd231ps	624(%rsp), %ymm9, %ymm3
	vfmadd231ps	592(%rsp), %ymm8, %ymm3
	vfmadd231ps	560(%rsp), %ymm7, %ymm3
	vfmadd231ps	528(%rsp), %ymm13, %ymm3
	vmovups	240(%rsp), %ymm7
	vfmadd231ps	496(%rsp), %ymm7, %ymm3
	vfmadd231ps	464(%rsp), %ymm6, %ymm3
	vfmadd231ps	432(%rsp), %ymm5, %ymm3
	vfmadd231ps	400(%rsp), %ymm4, %ymm3
	vfmadd231ps	368(%rsp), %ymm14, %ymm3
	vfmadd231ps	336(%rsp), %ymm2, %ymm3
	vfmadd231ps	304(%rsp), %ymm1, %ymm3
	vfmadd231ps	272(%rsp), %ymm0, %ymm3
	vmovaps	%ymm3, 2080(%rbx,%rsi)
	incq	%rdi
	cmpq	$16, %rdi
	jne	.LBB0_23
