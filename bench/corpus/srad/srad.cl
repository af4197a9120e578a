/*===- srad.cl - Rodinia's srad kernels in OpenCL C -----------------------===//
//
// Written after Rodinia's opencl/srad (kernel/kernel_gpu_opencl.cl): speckle
// reducing anisotropic diffusion of an Nr x Nc image stored column by column
// (element ei is row ei % Nr of column ei / Nr). One work-item per element,
// work-groups of NUMBER_THREADS = 256:
//   extract   - I = exp(I / 255)
//   prepare   - sums = I, sums2 = I * I
//   reduce    - one level of the tree that sums sums and sums2: each
//               work-group adds its 256 strided elements in local memory and
//               writes the result back in place (the host launches it until
//               one work-group is left)
//   srad      - the directional derivatives and the diffusion coefficient
//   srad2     - the divergence and the image update
//   compress  - I = log(I) * 255
// The double constants (0.5, 1.0 / 16.0, 0.25, 1.0) promote their
// expressions to double, as in the original compiled for a device with
// doubles; the pragma below says so explicitly.
//
// Known problem: PoCL 3.1 miscompiles reduce_kernel, this one as Rodinia's
// own: with barrier loops in both branches of the (uniform) if/else on the
// work-group, the full work-groups leave their sums unreduced, so the
// opencl system fails srad's check. The kernel is left as the original has
// it; Kiln and the native loops compute the reduction as written.
//
//===----------------------------------------------------------------------===*/

#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define fp float
#define NUMBER_THREADS 256

__kernel void extract_kernel(long d_Ne, __global fp *d_I) {
  int bx = get_group_id(0);
  int tx = get_local_id(0);
  int ei = (bx * NUMBER_THREADS) + tx; // the grid may exceed the image
  if (ei < d_Ne)
    d_I[ei] = exp(d_I[ei] / 255);
}

__kernel void prepare_kernel(long d_Ne, __global fp *d_I, __global fp *d_sums,
                             __global fp *d_sums2) {
  int bx = get_group_id(0);
  int tx = get_local_id(0);
  int ei = (bx * NUMBER_THREADS) + tx;
  if (ei < d_Ne) {
    d_sums[ei] = d_I[ei];
    d_sums2[ei] = d_I[ei] * d_I[ei];
  }
}

__kernel void reduce_kernel(long d_Ne, long d_no, int d_mul,
                            __global fp *d_sums, __global fp *d_sums2,
                            int gridDim) {
  int bx = get_group_id(0);
  int tx = get_local_id(0);
  int ei = (bx * NUMBER_THREADS) + tx;
  // The elements of the last work-group, and the largest power of two not
  // above them.
  int nf = NUMBER_THREADS - (gridDim * NUMBER_THREADS - d_no);
  int df = 0;

  __local fp d_psum[NUMBER_THREADS];
  __local fp d_psum2[NUMBER_THREADS];
  int i;

  if (ei < d_no) {
    d_psum[tx] = d_sums[ei * d_mul];
    d_psum2[tx] = d_sums2[ei * d_mul];
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);

  if (nf == NUMBER_THREADS) {
    // Every work-group is full: a tree over pairs, 4s, ..., 256s.
    for (i = 2; i <= NUMBER_THREADS; i = 2 * i) {
      if ((tx + 1) % i == 0) {
        d_psum[tx] = d_psum[tx] + d_psum[tx - i / 2];
        d_psum2[tx] = d_psum2[tx] + d_psum2[tx - i / 2];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tx == (NUMBER_THREADS - 1)) {
      d_sums[bx * d_mul * NUMBER_THREADS] = d_psum[tx];
      d_sums2[bx * d_mul * NUMBER_THREADS] = d_psum2[tx];
    }
  } else {
    if (bx != (gridDim - 1)) {
      // A full work-group: the same tree.
      for (i = 2; i <= NUMBER_THREADS; i = 2 * i) {
        if ((tx + 1) % i == 0) {
          d_psum[tx] = d_psum[tx] + d_psum[tx - i / 2];
          d_psum2[tx] = d_psum2[tx] + d_psum2[tx - i / 2];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (tx == (NUMBER_THREADS - 1)) {
        d_sums[bx * d_mul * NUMBER_THREADS] = d_psum[tx];
        d_sums2[bx * d_mul * NUMBER_THREADS] = d_psum2[tx];
      }
    } else {
      // The last, partial work-group: a tree over its first df elements,
      // then its last busy work-item adds the rest one by one. (As in the
      // original, the rest is read at d_sums[i], not d_sums[i * d_mul].)
      for (i = 2; i <= NUMBER_THREADS; i = 2 * i)
        if (nf >= i)
          df = i;
      for (i = 2; i <= df; i = 2 * i) {
        if ((tx + 1) % i == 0 && tx < df) {
          d_psum[tx] = d_psum[tx] + d_psum[tx - i / 2];
          d_psum2[tx] = d_psum2[tx] + d_psum2[tx - i / 2];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (tx == (df - 1)) {
        for (i = (bx * NUMBER_THREADS) + df; i < (bx * NUMBER_THREADS) + nf;
             i++) {
          d_psum[tx] = d_psum[tx] + d_sums[i];
          d_psum2[tx] = d_psum2[tx] + d_sums2[i];
        }
        d_sums[bx * d_mul * NUMBER_THREADS] = d_psum[tx];
        d_sums2[bx * d_mul * NUMBER_THREADS] = d_psum2[tx];
      }
    }
  }
}

__kernel void srad_kernel(fp d_lambda, int d_Nr, int d_Nc, long d_Ne,
                          __global int *d_iN, __global int *d_iS,
                          __global int *d_jE, __global int *d_jW,
                          __global fp *d_dN, __global fp *d_dS,
                          __global fp *d_dE, __global fp *d_dW, fp d_q0sqr,
                          __global fp *d_c, __global fp *d_I) {
  int bx = get_group_id(0);
  int tx = get_local_id(0);
  int ei = bx * NUMBER_THREADS + tx;
  int row, col;
  fp d_Jc;
  fp d_dN_loc, d_dS_loc, d_dW_loc, d_dE_loc;
  fp d_c_loc;
  fp d_G2, d_L, d_num, d_den, d_qsqr;

  // The element's row and column (the image is stored column by column).
  row = (ei + 1) % d_Nr - 1;
  col = (ei + 1) / d_Nr + 1 - 1;
  if ((ei + 1) % d_Nr == 0) {
    row = d_Nr - 1;
    col = col - 1;
  }

  if (ei < d_Ne) {
    d_Jc = d_I[ei];
    // Directional derivatives.
    d_dN_loc = d_I[d_iN[row] + d_Nr * col] - d_Jc;
    d_dS_loc = d_I[d_iS[row] + d_Nr * col] - d_Jc;
    d_dW_loc = d_I[row + d_Nr * d_jW[col]] - d_Jc;
    d_dE_loc = d_I[row + d_Nr * d_jE[col]] - d_Jc;
    // Normalised gradient magnitude squared and Laplacian.
    d_G2 = (d_dN_loc * d_dN_loc + d_dS_loc * d_dS_loc + d_dW_loc * d_dW_loc +
            d_dE_loc * d_dE_loc) /
           (d_Jc * d_Jc);
    d_L = (d_dN_loc + d_dS_loc + d_dW_loc + d_dE_loc) / d_Jc;
    // The instantaneous coefficient of variation.
    d_num = (0.5 * d_G2) - ((1.0 / 16.0) * (d_L * d_L));
    d_den = 1 + (0.25 * d_L);
    d_qsqr = d_num / (d_den * d_den);
    // The diffusion coefficient, saturated to [0, 1].
    d_den = (d_qsqr - d_q0sqr) / (d_q0sqr * (1 + d_q0sqr));
    d_c_loc = 1.0 / (1.0 + d_den);
    if (d_c_loc < 0)
      d_c_loc = 0;
    else if (d_c_loc > 1)
      d_c_loc = 1;

    d_dN[ei] = d_dN_loc;
    d_dS[ei] = d_dS_loc;
    d_dW[ei] = d_dW_loc;
    d_dE[ei] = d_dE_loc;
    d_c[ei] = d_c_loc;
  }
}

__kernel void srad2_kernel(fp d_lambda, int d_Nr, int d_Nc, long d_Ne,
                           __global int *d_iN, __global int *d_iS,
                           __global int *d_jE, __global int *d_jW,
                           __global fp *d_dN, __global fp *d_dS,
                           __global fp *d_dE, __global fp *d_dW,
                           __global fp *d_c, __global fp *d_I) {
  int bx = get_group_id(0);
  int tx = get_local_id(0);
  int ei = bx * NUMBER_THREADS + tx;
  int row, col;
  fp d_cN, d_cS, d_cW, d_cE;
  fp d_D;

  row = (ei + 1) % d_Nr - 1;
  col = (ei + 1) / d_Nr + 1 - 1;
  if ((ei + 1) % d_Nr == 0) {
    row = d_Nr - 1;
    col = col - 1;
  }

  if (ei < d_Ne) {
    // The diffusion coefficients of the element and its S and E neighbours.
    d_cN = d_c[ei];
    d_cS = d_c[d_iS[row] + d_Nr * col];
    d_cW = d_c[ei];
    d_cE = d_c[row + d_Nr * d_jE[col]];
    // The divergence and the image update.
    d_D = d_cN * d_dN[ei] + d_cS * d_dS[ei] + d_cW * d_dW[ei] +
          d_cE * d_dE[ei];
    d_I[ei] = d_I[ei] + 0.25 * d_lambda * d_D;
  }
}

__kernel void compress_kernel(long d_Ne, __global fp *d_I) {
  int bx = get_group_id(0);
  int tx = get_local_id(0);
  int ei = (bx * NUMBER_THREADS) + tx;
  if (ei < d_Ne)
    d_I[ei] = log(d_I[ei]) * 255;
}
