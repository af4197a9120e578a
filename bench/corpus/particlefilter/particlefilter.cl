// particlefilter.cl - a particle filter tracking an object in a video.
//
// Written after Rodinia's opencl/particlefilter, single precision
// (particle_single.cl): per frame, likelihood_kernel moves the particles and
// weighs them against the frame (with a tree sum of the weights per
// work-group in local memory), sum_kernel adds the work-groups' sums,
// the three normalize kernels normalise the weights and (work-item 0) build
// the CDF and the systematic-resampling offsets, and find_index_kernel
// resamples. 1-D work-groups of 512 (Rodinia's threads_per_block).
//
// Rodinia's normalize_weights_kernel separates its three steps (normalise
// the weights; work-item 0 builds the CDF from every work-group's weights
// and draws u[0]; every work-group reads u[0]) by
// barrier(CLK_GLOBAL_MEM_FENCE), which orders one work-group only: the CDF
// and the offsets then depend on the order the work-groups ran in, and so
// does the work of find_index_kernel (a linear search of the CDF): from
// 4.3 to 37 million CDF entries read a frame, between runs and systems.
// Here each step is a kernel of its own (normalize_weights_kernel,
// normalize_cdf_kernel, normalize_offsets_kernel, launched in that order
// with the same geometry), which is what the global fence was meant to
// give.
// The unsuffixed literals (1.0, 5.0, 2.0, 50.0) are doubles, as in Rodinia.
// Differs from Rodinia: d_randu's LCG step is computed in unsigned
// (wrapping) arithmetic, where Rodinia's int overflow is undefined;
// likelihood_kernel's __local buffer argument (the host passes 512 floats)
// is a __local array of 512 in the kernel, since the corpus passes buffers
// and scalars only; the host built the program with -cl-fast-relaxed-math,
// the corpus builds it without options.

#define SCALE_FACTOR 300

float dev_round_float(float Value) {
  int NewValue = (int)(Value);
  if (Value - NewValue < .5f)
    return NewValue;
  else
    return NewValue++; // returns NewValue, as in Rodinia
}

float calcLikelihoodSum(__global unsigned char *I, __global int *Ind,
                        int NumOnes, int Index) {
  float LikelihoodSum = 0.0;
  for (int X = 0; X < NumOnes; X++)
    LikelihoodSum += (pow((float)(I[Ind[Index * NumOnes + X]] - 100), 2) -
                      pow((float)(I[Ind[Index * NumOnes + X]] - 228), 2)) /
                     50.0;
  return LikelihoodSum;
}

void cdfCalc(__global float *CDF, __global float *Weights, int Nparticles) {
  CDF[0] = Weights[0];
  for (int X = 1; X < Nparticles; X++)
    CDF[X] = Weights[X] + CDF[X - 1];
}

// A linear congruential generator per particle; uniform in [0, 1).
float d_randu(__global int *Seed, int Index) {
  int M = INT_MAX;
  int A = 1103515245;
  int C = 12345;
  // Wrapping unsigned arithmetic: Rodinia writes A * Seed[Index] + C in
  // int, which overflows (undefined in OpenCL C; PoCL then gives some
  // seeds another remainder); GPUs and Kiln wrap.
  int Num = (int)((uint)A * (uint)Seed[Index] + (uint)C);
  Seed[Index] = Num % M;
  return fabs(Seed[Index] / ((float)M));
}

// Box-Muller: a normally distributed number from two uniform ones.
float d_randn(__global int *Seed, int Index) {
  float Pi = 3.14159265358979323846;
  float U = d_randu(Seed, Index);
  float V = d_randu(Seed, Index);
  float Cosine = cos(2 * Pi * V);
  float Rt = -2 * log(U);
  return sqrt(Rt) * Cosine;
}

__kernel void find_index_kernel(__global float *ArrayX, __global float *ArrayY,
                                __global float *CDF, __global float *U,
                                __global float *Xj, __global float *Yj,
                                __global float *Weights, int Nparticles) {
  int I = get_global_id(0);
  if (I < Nparticles) {
    int Index = -1;
    for (int X = 0; X < Nparticles; X++) {
      if (CDF[X] >= U[I]) {
        Index = X;
        break;
      }
    }
    if (Index == -1)
      Index = Nparticles - 1;
    Xj[I] = ArrayX[Index];
    Yj[I] = ArrayY[Index];
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
}

__kernel void normalize_weights_kernel(__global float *Weights, int Nparticles,
                                       __global float *PartialSums) {
  int I = get_global_id(0);
  int LocalId = get_local_id(0);
  __local float SumWeights;
  if (0 == LocalId)
    SumWeights = PartialSums[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (I < Nparticles)
    Weights[I] = Weights[I] / SumWeights;
}

__kernel void normalize_cdf_kernel(__global float *Weights, int Nparticles,
                                   __global float *CDF, __global float *U,
                                   __global int *Seed) {
  int I = get_global_id(0);
  if (I == 0) {
    cdfCalc(CDF, Weights, Nparticles);
    U[0] = (1 / ((float)(Nparticles))) * d_randu(Seed, I);
  }
}

__kernel void normalize_offsets_kernel(int Nparticles, __global float *U) {
  int I = get_global_id(0);
  int LocalId = get_local_id(0);
  __local float U1;
  if (0 == LocalId)
    U1 = U[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (I < Nparticles)
    U[I] = U1 + I / ((float)(Nparticles));
}

__kernel void sum_kernel(__global float *PartialSums, int Nparticles) {
  int I = get_global_id(0);
  size_t ThreadsPerBlock = get_local_size(0);
  if (I == 0) {
    float Sum = 0;
    int NumBlocks = ceil((float)Nparticles / (float)ThreadsPerBlock);
    for (int X = 0; X < NumBlocks; X++)
      Sum += PartialSums[X];
    PartialSums[0] = Sum;
  }
}

__kernel void likelihood_kernel(
    __global float *ArrayX, __global float *ArrayY, __global float *Xj,
    __global float *Yj, __global float *CDF, __global int *Ind,
    __global int *Objxy, __global float *Likelihood, __global unsigned char *I,
    __global float *U, __global float *Weights, const int Nparticles,
    const int CountOnes, const int MaxSize, int K, const int IszY,
    const int Nfr, __global int *Seed, __global float *PartialSums) {
  // A __local kernel argument of 512 floats in Rodinia (threads_per_block).
  __local float Buffer[512];
  int BlockId = get_group_id(0);
  int ThreadId = get_local_id(0);
  int Id = get_global_id(0);
  size_t ThreadsPerBlock = get_local_size(0);
  int IndX, IndY;
  if (Id < Nparticles) {
    ArrayX[Id] = Xj[Id];
    ArrayY[Id] = Yj[Id];
    Weights[Id] = 1 / ((float)(Nparticles));
    ArrayX[Id] = ArrayX[Id] + 1.0 + 5.0 * d_randn(Seed, Id);
    ArrayY[Id] = ArrayY[Id] - 2.0 + 2.0 * d_randn(Seed, Id);
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (Id < Nparticles) {
    for (int Y = 0; Y < CountOnes; Y++) {
      IndX = dev_round_float(ArrayX[Id]) + Objxy[Y * 2 + 1];
      IndY = dev_round_float(ArrayY[Id]) + Objxy[Y * 2];
      Ind[Id * CountOnes + Y] = abs(IndX * IszY * Nfr + IndY * Nfr + K);
      if (Ind[Id * CountOnes + Y] >= MaxSize)
        Ind[Id * CountOnes + Y] = 0;
    }
    Likelihood[Id] = calcLikelihoodSum(I, Ind, CountOnes, Id);
    Likelihood[Id] = Likelihood[Id] / CountOnes - SCALE_FACTOR;
    Weights[Id] = Weights[Id] * exp(Likelihood[Id]);
  }
  Buffer[ThreadId] = 0.0;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (Id < Nparticles)
    Buffer[ThreadId] = Weights[Id];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (unsigned int S = ThreadsPerBlock / 2; S > 0; S >>= 1) {
    if (ThreadId < S)
      Buffer[ThreadId] += Buffer[ThreadId + S];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (ThreadId == 0)
    PartialSums[BlockId] = Buffer[0];
}
