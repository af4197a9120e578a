//===- native-kernels.h - Native C++ versions of the bench suite -*- C++ -*-===//
//
// Plain C++ (OpenMP) versions of the suite's kernels, written for this
// project: kiln-bench runs them in its own process, interleaved with Kiln's
// launches on the same buffers and the same number of threads, and
// native-bench runs them beside the machine's limits. They are compiled on
// their own (native-kernels.cpp) with -O3 -march=native -fopenmp, so that
// these flags reach nothing else.
//
// Every function takes the thread count; work is split into equal contiguous
// chunks, one per thread (OpenMP static schedule).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BENCH_NATIVE_KERNELS_H
#define KILN_BENCH_NATIVE_KERNELS_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln_bench_native {

/// c[i] = a[i] + b[i].
void vadd(const float *A, const float *B, float *C, size_t N, int Threads);
/// y[i] = alpha * x[i] + y[i], the product and the sum each rounded: the
/// kernel's arithmetic (IEEE; Kiln fuses only an explicit `fma`), so the
/// result is Kiln's bit for bit. Built without floating-point contraction.
void saxpy(float Alpha, const float *X, float *Y, size_t N, int Threads);
/// The same loop as GCC builds it by default (-ffp-contract=fast): one FMA
/// an element, a different result in the last bit. Reported beside the
/// exact loop, not the target's reference: it is faster than the same
/// loop with a multiply and an add, a difference of arithmetic, not of
/// Kiln (docs/Performance.md, "What each number means").
void saxpyContracted(float Alpha, const float *X, float *Y, size_t N,
                     int Threads);
/// The f32 triad: a[i] = b[i] + s * c[i] (two streams read, one written:
/// counted as 12 bytes an element, like vadd).
void triad(float *A, const float *B, const float *C, float S, size_t N,
           int Threads);

/// partial[g] = the sum of in[g * Block, (g + 1) * Block): reduce_sum's
/// output, each block summed with vector partial sums.
void blockSums(const float *In, float *Partial, size_t Blocks, size_t Block,
               int Threads);

/// out = the inclusive prefix sums of in within each block of Block u32
/// values (scan_plane's output), sequentially in each block.
void blockScan(const uint32_t *In, uint32_t *Out, size_t Blocks, size_t Block,
               int Threads);

/// y = exp(x - max) / sum(exp(x - max)) per row, scalar expf (no
/// -ffast-math: glibc's vector expf is not used).
void softmaxRowsScalar(const float *X, float *Y, unsigned Rows, unsigned Cols,
                       int Threads);
/// The same with glibc's vector expf (libmvec, looked up at run time) on the
/// widest vectors this build targets; false (nothing done) when libmvec or
/// the vector width is not there.
bool softmaxRowsVector(const float *X, float *Y, unsigned Rows, unsigned Cols,
                       int Threads);
/// "_ZGVeN16v_expf" and the like, or "" when there is none.
const char *vectorExpName();

/// C = A * B for N x N row-major matrices, cache-blocked i-k-j loops.
void matmulBlocked(const float *A, const float *B, float *C, unsigned N,
                   int Threads);
/// The same product by matmul_tiled's algorithm, written by hand: a task per
/// 16 x 16 tile of C (the kernel's cube), and for each step of 16 along k,
/// the 16 x 16 tiles of A and B copied into local arrays (its shared memory)
/// and then multiplied out of them; each element's sum is the kernel's
/// chain of fmas in the kernel's order, so the result is Kiln's bit for bit.
/// The tile's sums are 16 vectors of 16 floats held in registers across the
/// steps where the target has enough of them (32 with AVX-512). N must be a
/// multiple of 16.
void matmulTiled16(const float *A, const float *B, float *C, unsigned N,
                   int Threads);
/// OpenBLAS's sgemm of the same; false when built without BLAS.
bool sgemm(const float *A, const float *B, float *C, unsigned N, int Threads);
bool haveBlas();
/// The kernel OpenBLAS chose for this CPU ("SkylakeX", "Haswell",
/// "Prescott", ...) and the threads it runs, or "none" without BLAS: a
/// DYNAMIC_ARCH build that does not recognise the CPU falls back to a slow
/// generic kernel, which makes the sgemm reference meaningless.
std::string blasConfig();

/// One sequentially consistent atomic add per element on the shared bins
/// (hist_global's algorithm). Bins are not zeroed here.
void histAtomic(const uint32_t *Data, uint32_t *Bins, size_t N, int Threads);
/// Private bins per thread, merged into Bins with one atomic add per
/// non-empty bin (hist_local's algorithm, and what C++ code would write).
void histPrivate(const uint32_t *Data, uint32_t *Bins, size_t N, int Threads);

/// An empty parallel region: the fork-join cost of the native side.
void emptyRegion(int Threads);

// Machine limits (native-bench).
/// 64-bit STREAM copy and triad over \p N doubles a stream, seconds each.
void streamCopy(double *C, const double *A, size_t N, int Threads);
void streamTriad(double *A, const double *B, const double *C, double S,
                 size_t N, int Threads);
/// Floating-point multiply-add peak: \p Iters steps of independent vector
/// FMA chains on each thread; returns the flop count done.
double fmaPeak(long Iters, int Threads);
/// The vector width in floats the FMA peak used.
int fmaWidth();

} // namespace kiln_bench_native

#endif
