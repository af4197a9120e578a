//===- backprop.cpp - Rodinia's backprop: one training step of a layer ---===//
//
// The host program of Rodinia's opencl/backprop (backprop_ocl.cpp,
// backprop.c, facetrain.c) for a network of in inputs, 16 hidden units and
// 1 output: bpnn_layerforward_ocl computes per-block partial sums of the
// hidden units' inputs; the host reads them back, adds them with the bias
// weights and squashes them into the hidden units, runs the output layer, the
// output and hidden errors and the hidden-to-output weight update itself, then
// writes the hidden deltas, the previous input weight changes and the input
// weights again and launches bpnn_adjust_weights_ocl.
//
// Inputs as the host makes them (seed 7 there, corpus::Random here): input
// weights and hidden weights uniform in [0, 1], the inputs uniform in [0, 1],
// previous weight changes 0, the target 0.1. Unit 0 of the inputs, which the
// host leaves unset and no kernel reads, is 0.
//
// Sizes: the suite's run has 4194304 inputs (weight matrices of 285 MB);
// size 1 has 524288 inputs, size 0 4096. With inputs and weights in [0, 1]
// the hidden sums are in the thousands, so the hidden units saturate at 1
// and the hidden deltas are 0, as in the original at its sizes: the weight
// update then adds 0 to every weight, and the check of the weights checks
// that the host's rewrite of them reached the device before the update.
//
// The check recomputes the step serially in C++: the suite's CPU path
// (bpnn_train) computes the hidden layer differently from its OpenCL path
// (the kernel's reduction doubles the sums), so the reference follows the
// OpenCL path's algorithm: the same products, the same tree order, the same
// host arithmetic. It compares the partial sums, the hidden units, and the
// final input weights and weight changes.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <cmath>
#include <sstream>

using namespace corpus;

namespace {

constexpr int Hid = 16; // hidden units (fixed by the kernels)
constexpr int Out = 1;  // output units
constexpr int BlockSize = 16;
constexpr double HostEta = 0.3, HostMomentum = 0.3; // backprop.h's doubles
constexpr float Eta = 0.3f, Momentum = 0.3f;        // the kernels' floats

float squash(float X) { return float(1.0 / (1.0 + std::exp(-X))); }

/// The host's CPU part of the step after the hidden units are known:
/// bpnn_layerforward (hidden to output), bpnn_output_error,
/// bpnn_hidden_error and bpnn_adjust_weights (hidden to output weights).
/// Weights are (n1 + 1) x (n2 + 1) row-major.
void hostStep(std::vector<float> &HiddenUnits, std::vector<float> &OutputUnits,
              std::vector<float> &HiddenWeights,
              std::vector<float> &HiddenPrevWeights,
              const std::vector<float> &Target,
              std::vector<float> &OutputDelta,
              std::vector<float> &HiddenDelta) {
  // bpnn_layerforward(hidden_units, output_units, hidden_weights, hid, out)
  HiddenUnits[0] = 1.0f;
  for (int J = 1; J <= Out; ++J) {
    float Sum = 0.0f;
    for (int K = 0; K <= Hid; ++K)
      Sum += HiddenWeights[K * (Out + 1) + J] * HiddenUnits[K];
    OutputUnits[J] = squash(Sum);
  }
  // bpnn_output_error
  for (int J = 1; J <= Out; ++J) {
    float O = OutputUnits[J], T = Target[J];
    OutputDelta[J] = float(O * (1.0 - O) * (T - O));
  }
  // bpnn_hidden_error
  for (int J = 1; J <= Hid; ++J) {
    float H = HiddenUnits[J], Sum = 0.0f;
    for (int K = 1; K <= Out; ++K)
      Sum += OutputDelta[K] * HiddenWeights[J * (Out + 1) + K];
    HiddenDelta[J] = float(H * (1.0 - H) * Sum);
  }
  // bpnn_adjust_weights(output_delta, out, hidden_units, hid, ...)
  HiddenUnits[0] = 1.0f;
  for (int J = 1; J <= Out; ++J)
    for (int K = 0; K <= Hid; ++K) {
      float NewDw = float(HostEta * OutputDelta[J] * HiddenUnits[K] +
                          HostMomentum * HiddenPrevWeights[K * (Out + 1) + J]);
      HiddenWeights[K * (Out + 1) + J] += NewDw;
      HiddenPrevWeights[K * (Out + 1) + J] = NewDw;
    }
}

class BackpropInstance : public Instance {
public:
  explicit BackpropInstance(int In) : In(In), NumBlocks(In / BlockSize) {
    Random R(7);
    // bpnn_create: input weights, then hidden weights; then load(): inputs.
    InputWeights.resize(size_t(In + 1) * (Hid + 1));
    for (float &W : InputWeights)
      W = R.unit();
    HiddenWeights0.resize((Hid + 1) * (Out + 1));
    for (float &W : HiddenWeights0)
      W = R.unit();
    InputUnits.assign(In + 1, 0.0f);
    for (int I = 1; I <= In; ++I)
      InputUnits[I] = R.unit();
    Target.assign(Out + 1, 0.1f);
  }

  void setup(Backend &B) override {
    size_t WBytes = InputWeights.size() * sizeof(float);
    DInput = B.create(InputUnits);
    DInputHidden = B.create(InputWeights);
    DOutputHidden = B.create((Hid + 1) * sizeof(float));
    DPartialSum = B.create(size_t(NumBlocks) * Hid * sizeof(float));
    DHiddenDelta = B.create((Hid + 1) * sizeof(float));
    DInputPrevWeights = B.create(WBytes);
  }

  void run(Backend &B) override {
    Dim3 Cubes{1, uint32_t(NumBlocks)}, Cube{BlockSize, BlockSize};
    B.launch("bpnn_layerforward_ocl", Cubes, Cube,
             {Arg::buf(DInput), Arg::buf(DOutputHidden),
              Arg::buf(DInputHidden), Arg::buf(DPartialSum), Arg::i32(In),
              Arg::i32(Hid)});
    PartialSum = B.read<float>(DPartialSum, size_t(NumBlocks) * Hid);

    // The hidden units from the partial sums and the bias weights, then the
    // host's part of the step.
    HiddenUnits.assign(Hid + 1, 0.0f);
    for (int J = 1; J <= Hid; ++J) {
      float Sum = 0.0f;
      for (int K = 0; K < NumBlocks; ++K)
        Sum += PartialSum[size_t(K) * Hid + J - 1];
      Sum += InputWeights[J];
      HiddenUnits[J] = squash(Sum);
    }
    std::vector<float> OutputUnits(Out + 1), OutputDelta(Out + 1, 0.0f);
    std::vector<float> HiddenWeights = HiddenWeights0;
    std::vector<float> HiddenPrevWeights((Hid + 1) * (Out + 1), 0.0f);
    HiddenDelta.assign(Hid + 1, 0.0f);
    hostStep(HiddenUnits, OutputUnits, HiddenWeights, HiddenPrevWeights,
             Target, OutputDelta, HiddenDelta);

    B.write(DHiddenDelta, HiddenDelta);
    // The previous input weight changes (all zero) and the input weights
    // again: bpnn_layerforward_ocl wrote its products over them.
    std::vector<float> PrevWeights(InputWeights.size(), 0.0f);
    B.write(DInputPrevWeights, PrevWeights);
    B.write(DInputHidden, InputWeights);
    B.launch("bpnn_adjust_weights_ocl", Cubes, Cube,
             {Arg::buf(DHiddenDelta), Arg::i32(Hid), Arg::buf(DInput),
              Arg::i32(In), Arg::buf(DInputHidden),
              Arg::buf(DInputPrevWeights)});
    B.finish();
  }

  bool check(Backend &B, std::string &Why) override {
    reference();
    if (!closeEnough(PartialSum.data(), RefPartialSum.data(),
                     PartialSum.size(), 1e-4, 1e-5, Why)) {
      Why = "hidden_partial_sum: " + Why;
      return false;
    }
    if (!closeEnough(HiddenUnits.data(), RefHiddenUnits.data(), Hid + 1, 1e-5,
                     1e-6, Why)) {
      Why = "hidden units: " + Why;
      return false;
    }
    size_t NW = InputWeights.size();
    std::vector<float> W = B.read<float>(DInputHidden, NW);
    std::vector<float> OldW = B.read<float>(DInputPrevWeights, NW);
    if (!closeEnough(W.data(), RefWeights.data(), NW, 1e-5, 1e-6, Why)) {
      Why = "input weights: " + Why;
      return false;
    }
    if (!closeEnough(OldW.data(), RefPrevWeights.data(), NW, 1e-4, 1e-7,
                     Why)) {
      Why = "input weight changes: " + Why;
      return false;
    }
    // The inputs go back to the host unchanged.
    std::vector<float> Input = B.read<float>(DInput, In + 1);
    for (int I = 1; I <= In; ++I)
      if (Input[I] != InputUnits[I]) {
        std::ostringstream OS;
        OS << "input " << I << " changed";
        Why = OS.str();
        return false;
      }
    return true;
  }

  unsigned launches() const override { return 2; }

private:
  /// The step serially, as the OpenCL path computes it.
  void reference() {
    if (!RefPartialSum.empty())
      return;
    RefPartialSum.resize(size_t(NumBlocks) * Hid);
    float M[BlockSize][BlockSize];
    for (int By = 0; By < NumBlocks; ++By) {
      for (int Ty = 0; Ty < BlockSize; ++Ty)
        for (int Tx = 0; Tx < BlockSize; ++Tx)
          M[Ty][Tx] =
              InputWeights[size_t(Hid + 1) * (BlockSize * By + Ty + 1) + Tx +
                           1] *
              InputUnits[BlockSize * By + Ty + 1];
      for (int P = 1; P <= BlockSize; P *= 2)
        for (int Ty = 0; Ty < BlockSize; Ty += P)
          for (int Tx = 0; Tx < BlockSize; ++Tx)
            M[Ty][Tx] += M[Ty + P / 2][Tx];
      for (int Tx = 0; Tx < Hid; ++Tx)
        RefPartialSum[size_t(By) * Hid + Tx] = M[0][Tx];
    }
    RefHiddenUnits.assign(Hid + 1, 0.0f);
    for (int J = 1; J <= Hid; ++J) {
      float Sum = 0.0f;
      for (int K = 0; K < NumBlocks; ++K)
        Sum += RefPartialSum[size_t(K) * Hid + J - 1];
      Sum += InputWeights[J];
      RefHiddenUnits[J] = squash(Sum);
    }
    std::vector<float> OutputUnits(Out + 1), OutputDelta(Out + 1, 0.0f);
    std::vector<float> HiddenWeights = HiddenWeights0;
    std::vector<float> HiddenPrevWeights((Hid + 1) * (Out + 1), 0.0f);
    std::vector<float> Delta(Hid + 1, 0.0f);
    hostStep(RefHiddenUnits, OutputUnits, HiddenWeights, HiddenPrevWeights,
             Target, OutputDelta, Delta);
    // bpnn_adjust_weights_ocl with previous changes of 0; row 0 (the bias
    // weights) without the input factor.
    RefWeights = InputWeights;
    RefPrevWeights.assign(InputWeights.size(), 0.0f);
    for (int K = 0; K <= In; ++K)
      for (int J = 1; J <= Hid; ++J) {
        float Ly = K == 0 ? 1.0f : InputUnits[K];
        float Dw = Eta * Delta[J] * Ly + Momentum * 0.0f;
        RefWeights[size_t(K) * (Hid + 1) + J] += Dw;
        RefPrevWeights[size_t(K) * (Hid + 1) + J] = Dw;
      }
  }

  int In, NumBlocks;
  std::vector<float> InputWeights, HiddenWeights0, InputUnits, Target;
  Buf DInput, DInputHidden, DOutputHidden, DPartialSum, DHiddenDelta,
      DInputPrevWeights;
  std::vector<float> PartialSum, HiddenUnits, HiddenDelta;
  std::vector<float> RefPartialSum, RefHiddenUnits, RefWeights,
      RefPrevWeights;
};

/// bpnn_layerforward_ocl: one iteration per block of 16 inputs, the cube's
/// work as loops over its 16 x 16 elements.
void layerforwardNative(const NativeLaunch &L) {
  const float *Input = L.ptr<float>(0);
  float *InputHidden = L.ptr<float>(2);
  float *PartialSum = L.ptr<float>(3);
  int H = L.value<int32_t>(5);
  int Blocks = int(L.Cubes.Y);
#pragma omp parallel for
  for (int By = 0; By < Blocks; ++By) {
    float Node[BlockSize], M[BlockSize][BlockSize];
    for (int Ty = 0; Ty < BlockSize; ++Ty)
      Node[Ty] = Input[BlockSize * By + Ty + 1];
    for (int Ty = 0; Ty < BlockSize; ++Ty)
      for (int Tx = 0; Tx < BlockSize; ++Tx)
        M[Ty][Tx] = InputHidden[size_t(H + 1) * (BlockSize * By + Ty + 1) +
                                Tx + 1] *
                    Node[Ty];
    for (int P = 1; P <= BlockSize; P *= 2)
      for (int Ty = 0; Ty < BlockSize; Ty += P)
        for (int Tx = 0; Tx < BlockSize; ++Tx)
          M[Ty][Tx] += M[Ty + P / 2][Tx];
    for (int Ty = 0; Ty < BlockSize; ++Ty)
      for (int Tx = 0; Tx < BlockSize; ++Tx)
        InputHidden[size_t(H + 1) * (BlockSize * By + Ty + 1) + Tx + 1] =
            M[Ty][Tx];
    for (int Ty = 0; Ty < BlockSize; ++Ty)
      PartialSum[size_t(By) * H + Ty] = M[0][Ty];
  }
}

/// bpnn_adjust_weights_ocl: one iteration per block of 16 inputs; block 0
/// also updates the bias row after its own weights.
void adjustWeightsNative(const NativeLaunch &L) {
  const float *Delta = L.ptr<float>(0);
  int H = L.value<int32_t>(1);
  const float *Ly = L.ptr<float>(2);
  float *W = L.ptr<float>(4);
  float *OldW = L.ptr<float>(5);
  int Blocks = int(L.Cubes.Y);
#pragma omp parallel for
  for (int By = 0; By < Blocks; ++By) {
    for (int Ty = 0; Ty < BlockSize; ++Ty)
      for (int Tx = 0; Tx < BlockSize; ++Tx) {
        size_t Index = size_t(H + 1) * (BlockSize * By + Ty + 1) + Tx + 1;
        float Dw = Eta * Delta[Tx + 1] * Ly[BlockSize * By + Ty + 1] +
                   Momentum * OldW[Index];
        W[Index] += Dw;
        OldW[Index] = Dw;
      }
    if (By == 0)
      for (int Tx = 0; Tx < BlockSize; ++Tx) {
        float Dw = Eta * Delta[Tx + 1] + Momentum * OldW[Tx + 1];
        W[Tx + 1] += Dw;
        OldW[Tx + 1] = Dw;
      }
  }
}

} // namespace

KILN_CORPUS_NATIVE(bpnn_layerforward_ocl, layerforwardNative);
KILN_CORPUS_NATIVE(bpnn_adjust_weights_ocl, adjustWeightsNative);

KILN_CORPUS_BENCHMARK(backprop, "one training step of a 524288-16-1 layer "
                                "(Rodinia backprop), host part between",
                      [](int Size) {
                        return std::make_unique<BackpropInstance>(
                            Size == 0 ? 4096 : 524288);
                      });
