	leaq	8(%r14), %rdi
	shlq	$6, %r14
	vbroadcastss	(%rcx,%r14), %zmm5
	vbroadcastss	64(%rcx,%r14), %zmm6
	vbroadcastss	128(%rcx,%r14), %zmm7
	vbroadcastss	192(%rcx,%r14), %zmm8
	vbroadcastss	256(%rcx,%r14), %zmm9
	vbroadcastss	320(%rcx,%r14), %zmm10
	vbroadcastss	384(%rcx,%r14), %zmm11
	vbroadcastss	448(%rcx,%r14), %zmm12
	vmovaps	1024(%rcx), %zmm13
	vmovaps	1088(%rcx), %zmm14
	vmovaps	1152(%rcx), %zmm15
	vmovaps	1216(%rcx), %zmm16
	vfmadd213ps	2048(%rcx,%r14), %zmm13, %zmm5
	vfmadd213ps	2112(%rcx,%r14), %zmm13, %zmm6
	vfmadd213ps	2176(%rcx,%r14), %zmm13, %zmm7
	vfmadd213ps	2240(%rcx,%r14), %zmm13, %zmm8
	vfmadd213ps	2304(%rcx,%r14), %zmm13, %zmm9
	vfmadd213ps	2368(%rcx,%r14), %zmm13, %zmm10
	vfmadd213ps	2432(%rcx,%r14), %zmm13, %zmm11
	vfmadd213ps	2496(%rcx,%r14), %zmm13, %zmm12
	vfmadd231ps	4(%rcx,%r14){1to16}, %zmm14, %zmm5
	vfmadd231ps	68(%rcx,%r14){1to16}, %zmm14, %zmm6
	vfmadd231ps	132(%rcx,%r14){1to16}, %zmm14, %zmm7
	vfmadd231ps	196(%rcx,%r14){1to16}, %zmm14, %zmm8
	vfmadd231ps	260(%rcx,%r14){1to16}, %zmm14, %zmm9
	vfmadd231ps	324(%rcx,%r14){1to16}, %zmm14, %zmm10
	vfmadd231ps	388(%rcx,%r14){1to16}, %zmm14, %zmm11
	vfmadd231ps	452(%rcx,%r14){1to16}, %zmm14, %zmm12
	vfmadd231ps	8(%rcx,%r14){1to16}, %zmm15, %zmm5
	vfmadd231ps	72(%rcx,%r14){1to16}, %zmm15, %zmm6
	vfmadd231ps	136(%rcx,%r14){1to16}, %zmm15, %zmm7
	vfmadd231ps	200(%rcx,%r14){1to16}, %zmm15, %zmm8
	vfmadd231ps	264(%rcx,%r14){1to16}, %zmm15, %zmm9
	vfmadd231ps	328(%rcx,%r14){1to16}, %zmm15, %zmm10
	vfmadd231ps	392(%rcx,%r14){1to16}, %zmm15, %zmm11
	vfmadd231ps	456(%rcx,%r14){1to16}, %zmm15, %zmm12
	vfmadd231ps	12(%rcx,%r14){1to16}, %zmm16, %zmm5
	vfmadd231ps	76(%rcx,%r14){1to16}, %zmm16, %zmm6
	vfmadd231ps	140(%rcx,%r14){1to16}, %zmm16, %zmm7
	vfmadd231ps	204(%rcx,%r14){1to16}, %zmm16, %zmm8
	vfmadd231ps	268(%rcx,%r14){1to16}, %zmm16, %zmm9
	vfmadd231ps	332(%rcx,%r14){1to16}, %zmm16, %zmm10
	vfmadd231ps	396(%rcx,%r14){1to16}, %zmm16, %zmm11
	vfmadd231ps	460(%rcx,%r14){1to16}, %zmm16, %zmm12
	vmovaps	1280(%rcx), %zmm13
	vfmadd231ps	16(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	80(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	144(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	208(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	272(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	336(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	400(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	464(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1344(%rcx), %zmm13
	vfmadd231ps	20(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	84(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	148(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	212(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	276(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	340(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	404(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	468(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1408(%rcx), %zmm13
	vfmadd231ps	24(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	88(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	152(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	216(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	280(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	344(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	408(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	472(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1472(%rcx), %zmm13
	vfmadd231ps	28(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	92(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	156(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	220(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	284(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	348(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	412(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	476(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1536(%rcx), %zmm13
	vfmadd231ps	32(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	96(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	160(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	224(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	288(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	352(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	416(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	480(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1600(%rcx), %zmm13
	vfmadd231ps	36(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	100(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	164(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	228(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	292(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	356(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	420(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	484(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1664(%rcx), %zmm13
	vfmadd231ps	40(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	104(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	168(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	232(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	296(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	360(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	424(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	488(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1728(%rcx), %zmm13
	vfmadd231ps	44(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	108(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	172(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	236(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	300(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	364(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	428(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	492(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1792(%rcx), %zmm13
	vfmadd231ps	48(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	112(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	176(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	240(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	304(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	368(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	432(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	496(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1856(%rcx), %zmm13
	vfmadd231ps	52(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	116(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	180(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	244(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	308(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	372(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	436(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	500(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1920(%rcx), %zmm13
	vfmadd231ps	56(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	120(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	184(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	248(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	312(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	376(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	440(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	504(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	1984(%rcx), %zmm13
	vfmadd231ps	60(%rcx,%r14){1to16}, %zmm13, %zmm5
	vfmadd231ps	124(%rcx,%r14){1to16}, %zmm13, %zmm6
	vfmadd231ps	188(%rcx,%r14){1to16}, %zmm13, %zmm7
	vfmadd231ps	252(%rcx,%r14){1to16}, %zmm13, %zmm8
	vfmadd231ps	316(%rcx,%r14){1to16}, %zmm13, %zmm9
	vfmadd231ps	380(%rcx,%r14){1to16}, %zmm13, %zmm10
	vfmadd231ps	444(%rcx,%r14){1to16}, %zmm13, %zmm11
	vfmadd231ps	508(%rcx,%r14){1to16}, %zmm13, %zmm12
	vmovaps	%zmm5, 2048(%rcx,%r14)
	vmovaps	%zmm6, 2112(%rcx,%r14)
	vmovaps	%zmm7, 2176(%rcx,%r14)
	vmovaps	%zmm8, 2240(%rcx,%r14)
	vmovaps	%zmm9, 2304(%rcx,%r14)
	vmovaps	%zmm10, 2368(%rcx,%r14)
	vmovaps	%zmm11, 2432(%rcx,%r14)
	vmovaps	%zmm12, 2496(%rcx,%r14)
	movq	%rdi, %r14
	cmpq	$16, %rdi
	jne	.LBB0_23
