//===- native-kernels.cpp - Native C++ versions of the bench suite --------===//
//
// Built with -O3 -march=native -fopenmp (bench/CMakeLists.txt); see
// native-kernels.h.
//
//===----------------------------------------------------------------------===//

#include "native-kernels.h"

#include <dlfcn.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#ifdef KILN_BENCH_HAVE_BLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
extern "C" char *openblas_get_corename(void);
extern "C" int openblas_get_num_threads(void);
#endif

namespace kiln_bench_native {
namespace {

/// Runs F(Begin, End) on \p Threads equal contiguous chunks of [0, N).
template <typename F> void chunks(int Threads, size_t N, F &&Fn) {
#pragma omp parallel num_threads(Threads)
  {
    size_t T = omp_get_thread_num(), NT = omp_get_num_threads();
    Fn(N * T / NT, N * (T + 1) / NT);
  }
}

} // namespace

void vadd(const float *A, const float *B, float *C, size_t N, int Threads) {
  chunks(Threads, N, [=](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      C[I] = A[I] + B[I];
  });
}

// The pragma reaches the lambda: its body is part of this function.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
void saxpy(float Alpha, const float *X, float *Y, size_t N, int Threads) {
  chunks(Threads, N, [=](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      Y[I] = Alpha * X[I] + Y[I];
  });
}
#pragma GCC pop_options

void saxpyContracted(float Alpha, const float *X, float *Y, size_t N,
                     int Threads) {
  chunks(Threads, N, [=](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      Y[I] = std::fma(Alpha, X[I], Y[I]);
  });
}

void triad(float *A, const float *B, const float *C, float S, size_t N,
           int Threads) {
  chunks(Threads, N, [=](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      A[I] = B[I] + S * C[I];
  });
}

void blockSums(const float *In, float *Partial, size_t Blocks, size_t Block,
               int Threads) {
  chunks(Threads, Blocks, [=](size_t Lo, size_t Hi) {
    for (size_t G = Lo; G < Hi; ++G) {
      const float *P = In + G * Block;
      float S = 0.0f;
#pragma omp simd reduction(+ : S)
      for (size_t I = 0; I < Block; ++I)
        S += P[I];
      Partial[G] = S;
    }
  });
}

void blockScan(const uint32_t *In, uint32_t *Out, size_t Blocks, size_t Block,
               int Threads) {
  chunks(Threads, Blocks, [=](size_t Lo, size_t Hi) {
    for (size_t G = Lo; G < Hi; ++G) {
      uint32_t S = 0;
      for (size_t I = G * Block; I < (G + 1) * Block; ++I)
        Out[I] = S += In[I];
    }
  });
}

void softmaxRowsScalar(const float *X, float *Y, unsigned Rows, unsigned Cols,
                       int Threads) {
  chunks(Threads, Rows, [=](size_t Lo, size_t Hi) {
    for (size_t R = Lo; R < Hi; ++R) {
      const float *Xr = X + R * Cols;
      float *Yr = Y + R * Cols;
      float M = -INFINITY;
#pragma omp simd reduction(max : M)
      for (unsigned J = 0; J < Cols; ++J)
        M = std::max(M, Xr[J]);
      float S = 0.0f;
      for (unsigned J = 0; J < Cols; ++J) {
        Yr[J] = expf(Xr[J] - M);
        S += Yr[J];
      }
      const float Inv = 1.0f / S;
#pragma omp simd
      for (unsigned J = 0; J < Cols; ++J)
        Yr[J] *= Inv;
    }
  });
}

namespace {

// The widest vector of floats this build targets, as a GCC vector type, and
// glibc's vector expf for it (libmvec's names: 'e' = AVX-512, 'd' = AVX2).
#if defined(__AVX512F__)
constexpr unsigned W = 16;
constexpr const char *ExpName = "_ZGVeN16v_expf";
#elif defined(__AVX2__)
constexpr unsigned W = 8;
constexpr const char *ExpName = "_ZGVdN8v_expf";
#else
constexpr unsigned W = 0;
constexpr const char *ExpName = "";
#endif

#if defined(__AVX512F__) || defined(__AVX2__)
typedef float VecF __attribute__((vector_size(W * 4)));
using VecExp = VecF (*)(VecF);

VecF loadv(const float *P) {
  VecF V;
  std::memcpy(&V, P, sizeof V);
  return V;
}
void storev(float *P, VecF V) { std::memcpy(P, &V, sizeof V); }
VecF splat(float X) { return VecF{} + X; }

VecExp vectorExp() {
  static VecExp Fn = [] {
    void *H = dlopen("libmvec.so.1", RTLD_NOW);
    return H ? reinterpret_cast<VecExp>(dlsym(H, ExpName)) : nullptr;
  }();
  return Fn;
}
#endif

} // namespace

const char *vectorExpName() {
#if defined(__AVX512F__) || defined(__AVX2__)
  return vectorExp() ? ExpName : "";
#else
  return "";
#endif
}

bool softmaxRowsVector(const float *X, float *Y, unsigned Rows, unsigned Cols,
                       int Threads) {
#if defined(__AVX512F__) || defined(__AVX2__)
  VecExp Exp = vectorExp();
  if (!Exp || Cols % (2 * W) != 0)
    return false;
  chunks(Threads, Rows, [=](size_t Lo, size_t Hi) {
    for (size_t R = Lo; R < Hi; ++R) {
      const float *Xr = X + R * Cols;
      float *Yr = Y + R * Cols;
      VecF Mv = splat(-INFINITY);
      for (unsigned J = 0; J < Cols; J += W) {
        VecF V = loadv(Xr + J);
        Mv = V > Mv ? V : Mv;
      }
      float M = Mv[0];
      for (unsigned I = 1; I < W; ++I)
        M = std::max(M, Mv[I]);
      const VecF Mb = splat(M);
      VecF S0 = splat(0.0f), S1 = S0;
      for (unsigned J = 0; J < Cols; J += 2 * W) {
        VecF E0 = Exp(loadv(Xr + J) - Mb), E1 = Exp(loadv(Xr + J + W) - Mb);
        storev(Yr + J, E0);
        storev(Yr + J + W, E1);
        S0 += E0;
        S1 += E1;
      }
      S0 += S1;
      float S = 0.0f;
      for (unsigned I = 0; I < W; ++I)
        S += S0[I];
      const VecF Inv = splat(1.0f / S);
      for (unsigned J = 0; J < Cols; J += W)
        storev(Yr + J, loadv(Yr + J) * Inv);
    }
  });
  return true;
#else
  (void)X, (void)Y, (void)Rows, (void)Cols, (void)Threads;
  return false;
#endif
}

void matmulBlocked(const float *A, const float *B, float *C, unsigned N,
                   int Threads) {
  // Rows in blocks of 32 per task; k and j in blocks of 128 and 512 floats
  // (a 256 KiB panel of B, a 2 KiB row of C in L1).
  constexpr unsigned BI = 32, BK = 128, BJ = 512;
  const unsigned RowBlocks = (N + BI - 1) / BI;
#pragma omp parallel for num_threads(Threads) schedule(static)
  for (unsigned Ib = 0; Ib < RowBlocks; ++Ib) {
    const unsigned I0 = Ib * BI, I1 = std::min(N, I0 + BI);
    for (unsigned I = I0; I < I1; ++I)
      std::fill_n(C + size_t(I) * N, N, 0.0f);
    for (unsigned K0 = 0; K0 < N; K0 += BK) {
      const unsigned K1 = std::min(N, K0 + BK);
      for (unsigned J0 = 0; J0 < N; J0 += BJ) {
        const unsigned J1 = std::min(N, J0 + BJ);
        for (unsigned I = I0; I < I1; ++I) {
          float *__restrict Cr = C + size_t(I) * N;
          for (unsigned K = K0; K < K1; ++K) {
            const float Aik = A[size_t(I) * N + K];
            const float *__restrict Br = B + size_t(K) * N;
#pragma omp simd
            for (unsigned J = J0; J < J1; ++J)
              Cr[J] += Aik * Br[J];
          }
        }
      }
    }
  }
}

void matmulTiled16(const float *A, const float *B, float *C, unsigned N,
                   int Threads) {
  const unsigned Tiles = N / 16;
  const long Cubes = long(Tiles) * Tiles;
#pragma omp parallel for num_threads(Threads) schedule(static)
  for (long Cube = 0; Cube < Cubes; ++Cube) {
    const unsigned Col0 = unsigned(Cube % Tiles) * 16;
    const unsigned Row0 = unsigned(Cube / Tiles) * 16;
    alignas(64) float As[16][16], Bs[16][16];
    auto stage = [&](unsigned T) {
      for (unsigned R = 0; R < 16; ++R) {
        std::memcpy(As[R], A + size_t(Row0 + R) * N + T * 16, 64);
        std::memcpy(Bs[R], B + size_t(T * 16 + R) * N + Col0, 64);
      }
    };
#if defined(__AVX512F__)
    // The tile's 16 rows of sums stay in 16 of the 32 zmm registers across
    // all the steps.
    __m512 Acc[16];
    for (unsigned R = 0; R < 16; ++R)
      Acc[R] = _mm512_setzero_ps();
    for (unsigned T = 0; T < Tiles; ++T) {
      stage(T);
      for (unsigned K = 0; K < 16; ++K) {
        const __m512 Bk = _mm512_load_ps(Bs[K]);
        for (unsigned R = 0; R < 16; ++R)
          Acc[R] = _mm512_fmadd_ps(_mm512_set1_ps(As[R][K]), Bk, Acc[R]);
      }
    }
    for (unsigned R = 0; R < 16; ++R)
      _mm512_storeu_ps(C + size_t(Row0 + R) * N + Col0, Acc[R]);
#elif defined(__AVX2__) && defined(__FMA__)
    // 32 ymm registers of sums would not fit in AVX2's 16: they live in
    // memory, and each step updates 4 rows at a time (8 registers).
    alignas(32) float Sums[16][16] = {};
    for (unsigned T = 0; T < Tiles; ++T) {
      stage(T);
      for (unsigned R0 = 0; R0 < 16; R0 += 4) {
        __m256 Acc[4][2];
        for (unsigned R = 0; R < 4; ++R)
          for (unsigned H = 0; H < 2; ++H)
            Acc[R][H] = _mm256_load_ps(&Sums[R0 + R][8 * H]);
        for (unsigned K = 0; K < 16; ++K) {
          const __m256 B0 = _mm256_load_ps(&Bs[K][0]),
                       B1 = _mm256_load_ps(&Bs[K][8]);
          for (unsigned R = 0; R < 4; ++R) {
            const __m256 Ak = _mm256_broadcast_ss(&As[R0 + R][K]);
            Acc[R][0] = _mm256_fmadd_ps(Ak, B0, Acc[R][0]);
            Acc[R][1] = _mm256_fmadd_ps(Ak, B1, Acc[R][1]);
          }
        }
        for (unsigned R = 0; R < 4; ++R)
          for (unsigned H = 0; H < 2; ++H)
            _mm256_store_ps(&Sums[R0 + R][8 * H], Acc[R][H]);
      }
    }
    for (unsigned R = 0; R < 16; ++R)
      std::memcpy(C + size_t(Row0 + R) * N + Col0, Sums[R], 64);
#else
    float Sums[16][16] = {};
    for (unsigned T = 0; T < Tiles; ++T) {
      stage(T);
      for (unsigned R = 0; R < 16; ++R)
        for (unsigned K = 0; K < 16; ++K)
          for (unsigned J = 0; J < 16; ++J)
            Sums[R][J] = std::fma(As[R][K], Bs[K][J], Sums[R][J]);
    }
    for (unsigned R = 0; R < 16; ++R)
      std::memcpy(C + size_t(Row0 + R) * N + Col0, Sums[R], 64);
#endif
  }
}

bool haveBlas() {
#ifdef KILN_BENCH_HAVE_BLAS
  return true;
#else
  return false;
#endif
}

std::string blasConfig() {
#ifdef KILN_BENCH_HAVE_BLAS
  // How long its threads spin after a call (bench/run.sh sets 4: the
  // default, 28, has them spin into the next Kiln launch).
  const char *Timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  return std::string("OpenBLAS core ") + openblas_get_corename() + ", " +
         std::to_string(openblas_get_num_threads()) +
         " threads, thread timeout " +
         (Timeout ? std::string("2^") + Timeout : std::string("default")) +
         " cycles";
#else
  return "none";
#endif
}

bool sgemm(const float *A, const float *B, float *C, unsigned N, int Threads) {
#ifdef KILN_BENCH_HAVE_BLAS
  static int Set = 0;
  if (Set != Threads) {
    openblas_set_num_threads(Threads);
    Set = Threads;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, A, N,
              B, N, 0.0f, C, N);
  return true;
#else
  (void)A, (void)B, (void)C, (void)N, (void)Threads;
  return false;
#endif
}

void histAtomic(const uint32_t *Data, uint32_t *Bins, size_t N, int Threads) {
  chunks(Threads, N, [=](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      __atomic_fetch_add(&Bins[Data[I]], 1u, __ATOMIC_SEQ_CST);
  });
}

void histPrivate(const uint32_t *Data, uint32_t *Bins, size_t N, int Threads) {
  chunks(Threads, N, [=](size_t Lo, size_t Hi) {
    uint32_t H[256] = {};
    for (size_t I = Lo; I < Hi; ++I)
      ++H[Data[I] & 255u];
    for (unsigned K = 0; K < 256; ++K)
      if (H[K])
        __atomic_fetch_add(&Bins[K], H[K], __ATOMIC_SEQ_CST);
  });
}

void emptyRegion(int Threads) {
#pragma omp parallel num_threads(Threads)
  {
    __asm__ volatile("" ::: "memory");
  }
}

void streamCopy(double *C, const double *A, size_t N, int Threads) {
  chunks(Threads, N, [=](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      C[I] = A[I];
  });
}

void streamTriad(double *A, const double *B, const double *C, double S,
                 size_t N, int Threads) {
  chunks(Threads, N, [=](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      A[I] = B[I] + S * C[I];
  });
}

namespace {
#if defined(__AVX512F__)
using FmaVec = __m512;
inline FmaVec fmaSet(float X) { return _mm512_set1_ps(X); }
inline FmaVec fmaStep(FmaVec A, FmaVec M, FmaVec D) {
  return _mm512_fmadd_ps(A, M, D);
}
inline float fmaSum(FmaVec V) {
  float O[16];
  _mm512_storeu_ps(O, V);
  float S = 0;
  for (float X : O)
    S += X;
  return S;
}
constexpr int FmaW = 16;
#elif defined(__AVX2__) && defined(__FMA__)
using FmaVec = __m256;
inline FmaVec fmaSet(float X) { return _mm256_set1_ps(X); }
inline FmaVec fmaStep(FmaVec A, FmaVec M, FmaVec D) {
  return _mm256_fmadd_ps(A, M, D);
}
inline float fmaSum(FmaVec V) {
  float O[8];
  _mm256_storeu_ps(O, V);
  return O[0] + O[1] + O[2] + O[3] + O[4] + O[5] + O[6] + O[7];
}
constexpr int FmaW = 8;
#else
constexpr int FmaW = 0;
#endif

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
/// 10 independent chains: enough to cover 2 pipes x 4-5 cycles of latency,
/// few enough to stay in registers.
__attribute__((noinline)) float fmaChains(long Iters, float Seed) {
  constexpr int Chains = 10;
  const FmaVec M = fmaSet(0.99999994f), D = fmaSet(1e-7f);
  FmaVec Acc[Chains];
  for (int J = 0; J < Chains; ++J)
    Acc[J] = fmaSet(Seed + J);
  for (long I = 0; I < Iters; ++I) {
#pragma GCC unroll 10
    for (int J = 0; J < Chains; ++J)
      Acc[J] = fmaStep(Acc[J], M, D);
  }
  float S = 0;
  for (int J = 0; J < Chains; ++J)
    S += fmaSum(Acc[J]);
  return S;
}
#endif
} // namespace

int fmaWidth() { return FmaW; }

double fmaPeak(long Iters, int Threads) {
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  volatile float Sink = 0;
#pragma omp parallel num_threads(Threads)
  {
    float R = fmaChains(Iters, float(omp_get_thread_num()));
    if (R == 123456.0f)
      Sink = R;
  }
  (void)Sink;
  return 2.0 * 10 * FmaW * double(Iters) * Threads;
#else
  (void)Iters, (void)Threads;
  return 0;
#endif
}

} // namespace kiln_bench_native
