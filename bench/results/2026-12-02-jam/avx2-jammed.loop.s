	leaq	4(%r8), %r9
	shlq	$6, %r8
	vbroadcastss	(%rbx,%r8), %ymm1
	vbroadcastss	64(%rbx,%r8), %ymm2
	vbroadcastss	128(%rbx,%r8), %ymm0
	vbroadcastss	192(%rbx,%r8), %ymm9
	vmovaps	1024(%rbx), %ymm4
	vmovaps	1056(%rbx), %ymm3
	vmovaps	1088(%rbx), %ymm8
	vmovaps	2048(%rbx,%r8), %ymm5
	vfmadd231ps	%ymm4, %ymm1, %ymm5
	vmovaps	2112(%rbx,%r8), %ymm6
	vfmadd231ps	%ymm4, %ymm2, %ymm6
	vmovaps	2176(%rbx,%r8), %ymm7
	vfmadd231ps	%ymm4, %ymm0, %ymm7
	vfmadd213ps	2240(%rbx,%r8), %ymm9, %ymm4
	vfmadd213ps	2080(%rbx,%r8), %ymm3, %ymm1
	vfmadd213ps	2144(%rbx,%r8), %ymm3, %ymm2
	vfmadd213ps	2208(%rbx,%r8), %ymm3, %ymm0
	vmovaps	1120(%rbx), %ymm10
	vfmadd213ps	2272(%rbx,%r8), %ymm9, %ymm3
	vbroadcastss	4(%rbx,%r8), %ymm9
	vbroadcastss	68(%rbx,%r8), %ymm11
	vbroadcastss	132(%rbx,%r8), %ymm12
	vbroadcastss	196(%rbx,%r8), %ymm13
	vfmadd231ps	%ymm8, %ymm9, %ymm5
	vfmadd231ps	%ymm8, %ymm11, %ymm6
	vfmadd231ps	%ymm8, %ymm12, %ymm7
	vfmadd231ps	%ymm8, %ymm13, %ymm4
	vfmadd231ps	%ymm9, %ymm10, %ymm1
	vfmadd231ps	%ymm11, %ymm10, %ymm2
	vfmadd231ps	%ymm12, %ymm10, %ymm0
	vfmadd231ps	%ymm10, %ymm13, %ymm3
	vbroadcastss	8(%rbx,%r8), %ymm8
	vbroadcastss	72(%rbx,%r8), %ymm9
	vbroadcastss	136(%rbx,%r8), %ymm10
	vbroadcastss	200(%rbx,%r8), %ymm11
	vmovaps	1152(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1184(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	12(%rbx,%r8), %ymm8
	vbroadcastss	76(%rbx,%r8), %ymm9
	vbroadcastss	140(%rbx,%r8), %ymm10
	vbroadcastss	204(%rbx,%r8), %ymm11
	vmovaps	1216(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1248(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	16(%rbx,%r8), %ymm8
	vbroadcastss	80(%rbx,%r8), %ymm9
	vbroadcastss	144(%rbx,%r8), %ymm10
	vbroadcastss	208(%rbx,%r8), %ymm11
	vmovaps	1280(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1312(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	20(%rbx,%r8), %ymm8
	vbroadcastss	84(%rbx,%r8), %ymm9
	vbroadcastss	148(%rbx,%r8), %ymm10
	vbroadcastss	212(%rbx,%r8), %ymm11
	vmovaps	1344(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1376(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	24(%rbx,%r8), %ymm8
	vbroadcastss	88(%rbx,%r8), %ymm9
	vbroadcastss	152(%rbx,%r8), %ymm10
	vbroadcastss	216(%rbx,%r8), %ymm11
	vmovaps	1408(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1440(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	28(%rbx,%r8), %ymm8
	vbroadcastss	92(%rbx,%r8), %ymm9
	vbroadcastss	156(%rbx,%r8), %ymm10
	vbroadcastss	220(%rbx,%r8), %ymm11
	vmovaps	1472(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1504(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	32(%rbx,%r8), %ymm8
	vbroadcastss	96(%rbx,%r8), %ymm9
	vbroadcastss	160(%rbx,%r8), %ymm10
	vbroadcastss	224(%rbx,%r8), %ymm11
	vmovaps	1536(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1568(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	36(%rbx,%r8), %ymm8
	vbroadcastss	100(%rbx,%r8), %ymm9
	vbroadcastss	164(%rbx,%r8), %ymm10
	vbroadcastss	228(%rbx,%r8), %ymm11
	vmovaps	1600(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1632(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	40(%rbx,%r8), %ymm8
	vbroadcastss	104(%rbx,%r8), %ymm9
	vbroadcastss	168(%rbx,%r8), %ymm10
	vbroadcastss	232(%rbx,%r8), %ymm11
	vmovaps	1664(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1696(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	44(%rbx,%r8), %ymm8
	vbroadcastss	108(%rbx,%r8), %ymm9
	vbroadcastss	172(%rbx,%r8), %ymm10
	vbroadcastss	236(%rbx,%r8), %ymm11
	vmovaps	1728(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1760(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	48(%rbx,%r8), %ymm8
	vbroadcastss	112(%rbx,%r8), %ymm9
	vbroadcastss	176(%rbx,%r8), %ymm10
	vbroadcastss	240(%rbx,%r8), %ymm11
	vmovaps	1792(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1824(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	52(%rbx,%r8), %ymm8
	vbroadcastss	116(%rbx,%r8), %ymm9
	vbroadcastss	180(%rbx,%r8), %ymm10
	vbroadcastss	244(%rbx,%r8), %ymm11
	vmovaps	1856(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1888(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	56(%rbx,%r8), %ymm8
	vbroadcastss	120(%rbx,%r8), %ymm9
	vbroadcastss	184(%rbx,%r8), %ymm10
	vbroadcastss	248(%rbx,%r8), %ymm11
	vmovaps	1920(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	1952(%rbx), %ymm12
	vfmadd231ps	%ymm8, %ymm12, %ymm1
	vfmadd231ps	%ymm9, %ymm12, %ymm2
	vfmadd231ps	%ymm10, %ymm12, %ymm0
	vfmadd231ps	%ymm12, %ymm11, %ymm3
	vbroadcastss	60(%rbx,%r8), %ymm8
	vbroadcastss	124(%rbx,%r8), %ymm9
	vbroadcastss	188(%rbx,%r8), %ymm10
	vbroadcastss	252(%rbx,%r8), %ymm11
	vmovaps	1984(%rbx), %ymm12
	vfmadd231ps	%ymm12, %ymm8, %ymm5
	vfmadd231ps	%ymm12, %ymm9, %ymm6
	vfmadd231ps	%ymm12, %ymm10, %ymm7
	vfmadd231ps	%ymm12, %ymm11, %ymm4
	vmovaps	%ymm5, 2048(%rbx,%r8)
	vmovaps	%ymm6, 2112(%rbx,%r8)
	vmovaps	%ymm7, 2176(%rbx,%r8)
	vmovaps	%ymm4, 2240(%rbx,%r8)
	vmovaps	2016(%rbx), %ymm4
	vfmadd231ps	%ymm8, %ymm4, %ymm1
	vfmadd231ps	%ymm9, %ymm4, %ymm2
	vfmadd231ps	%ymm10, %ymm4, %ymm0
	vmovaps	%ymm1, 2080(%rbx,%r8)
	vmovaps	%ymm2, 2144(%rbx,%r8)
	vfmadd231ps	%ymm4, %ymm11, %ymm3
	vmovaps	%ymm0, 2208(%rbx,%r8)
	vmovaps	%ymm3, 2272(%rbx,%r8)
	movq	%r9, %r8
	cmpq	$16, %r9
	jne	.LBB0_23
