//===- cfd.cpp - Rodinia's cfd: 3-D Euler solver on an unstructured mesh --===//
//
// The host program of Rodinia's opencl/cfd (euler3d.cpp): it computes the
// far-field state and its flux contributions, sends the mesh (element
// volumes, 4 neighbours per element, 4 face normals per element) padded to
// a multiple of 192 elements, initialises variables, old_variables and
// fluxes to the far field (three launches of initialize_variables), and then
// for each iteration copies variables to old_variables, launches
// compute_step_factor and, for each of the RK = 3 Runge-Kutta stages,
// compute_flux and time_step(j). The variables are read back at the end.
//
// The OpenCL host has no CPU reference; the check runs the same solver
// serially (reference() below, with the kernels' per-element computations).
//
// Inputs: Rodinia reads its meshes from data files (fvcorr.domn.097K, 97046
// tetrahedra around a wing). No file is read here: the generator builds a
// tetrahedral mesh of the same kind, a box of N x N x N cubes each cut into
// the 6 tetrahedra of the Kuhn subdivision (every element has 4 faces, so
// NNB = 4 neighbours), with a slab of cubes in the middle taken out as the
// wing: a face on the wing is a wall (neighbour -1, after the host's
// conversion from the file's Fortran numbering), a face on the outer box
// the far field (-2). Elements are numbered cube by cube (x fastest), so a
// neighbour is the same cube's, the next cube's in x, or one row or one
// plane of cubes away, the locality of a mesh numbered along its layers.
// Areas are the tetrahedra's volumes and the normals the faces' area
// vectors, pointing into the element, as the host holds them after negating
// the file's.
//
// Where the host differs:
//   - the host's D2D copy (clEnqueueCopyBuffer of variables into
//     old_variables) is a read of variables and a write of old_variables:
//     the corpus's Backend has no device-to-device copy;
//   - the host pads the mesh by copying the last element's volume and
//     neighbours, and (a slip in euler3d.cpp) leaves the padded elements'
//     normals uninitialised; here they are zero, so the padded elements'
//     fluxes are zero;
//   - _clMemset of step_factors (memset_kernel) is not launched: the
//     buffer is created zeroed;
//   - the original's 2000 iterations are cut to 2 at the timed size.
//
// Size 0 is a 6 x 6 x 6 box (1242 elements), 2 iterations; size 1 is a
// 26 x 26 x 26 box (102486 elements, the size of fvcorr.domn.097K), 2
// iterations.
//
//===----------------------------------------------------------------------===//

#include "Corpus.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

using namespace corpus;

namespace {

constexpr float Gamma = 1.4f;
constexpr int NDim = 3, NNB = 4, RK = 3;
constexpr int VarDensity = 0, VarMomentum = 1;
constexpr int VarDensityEnergy = VarMomentum + NDim,
              NVar = VarDensityEnergy + 1;
constexpr float FfMach = 1.2f, DegAngleOfAttack = 0.0f;
constexpr int BlockLength = 192; // BLOCK_SIZE_1 to BLOCK_SIZE_4

struct Float3 {
  float X, Y, Z;
};

void computeFluxContribution(float Density, Float3 Momentum,
                             float DensityEnergy, float Pressure,
                             Float3 Velocity, Float3 &FcMomentumX,
                             Float3 &FcMomentumY, Float3 &FcMomentumZ,
                             Float3 &FcDensityEnergy) {
  FcMomentumX.X = Velocity.X * Momentum.X + Pressure;
  FcMomentumX.Y = Velocity.X * Momentum.Y;
  FcMomentumX.Z = Velocity.X * Momentum.Z;
  FcMomentumY.X = FcMomentumX.Y;
  FcMomentumY.Y = Velocity.Y * Momentum.Y + Pressure;
  FcMomentumY.Z = Velocity.Y * Momentum.Z;
  FcMomentumZ.X = FcMomentumX.Z;
  FcMomentumZ.Y = FcMomentumY.Z;
  FcMomentumZ.Z = Velocity.Z * Momentum.Z + Pressure;
  float DeP = DensityEnergy + Pressure;
  FcDensityEnergy.X = Velocity.X * DeP;
  FcDensityEnergy.Y = Velocity.Y * DeP;
  FcDensityEnergy.Z = Velocity.Z * DeP;
}

Float3 computeVelocity(float Density, Float3 Momentum) {
  return {Momentum.X / Density, Momentum.Y / Density, Momentum.Z / Density};
}
float computeSpeedSqd(Float3 V) { return V.X * V.X + V.Y * V.Y + V.Z * V.Z; }
float computePressure(float Density, float DensityEnergy, float SpeedSqd) {
  return (Gamma - 1.0f) * (DensityEnergy - 0.5f * Density * SpeedSqd);
}
float computeSpeedOfSound(float Density, float Pressure) {
  return std::sqrt(Gamma * Pressure / Density);
}

/// An element's state, read from the structure-of-arrays variables.
struct State {
  float Density, DensityEnergy;
  Float3 Momentum;
};
State loadState(const float *Variables, int I, int Nelr) {
  return {Variables[I + VarDensity * Nelr],
          Variables[I + VarDensityEnergy * Nelr],
          {Variables[I + (VarMomentum + 0) * Nelr],
           Variables[I + (VarMomentum + 1) * Nelr],
           Variables[I + (VarMomentum + 2) * Nelr]}};
}

/// compute_step_factor's work for element I.
void stepFactorElement(int I, const float *Variables, const float *Areas,
                       float *StepFactors, int Nelr) {
  State S = loadState(Variables, I, Nelr);
  Float3 Velocity = computeVelocity(S.Density, S.Momentum);
  float SpeedSqd = computeSpeedSqd(Velocity);
  float Pressure = computePressure(S.Density, S.DensityEnergy, SpeedSqd);
  float SpeedOfSound = computeSpeedOfSound(S.Density, Pressure);
  StepFactors[I] =
      0.5f / (std::sqrt(Areas[I]) * (std::sqrt(SpeedSqd) + SpeedOfSound));
}

/// compute_flux's work for element I. FfFc holds the far field's flux
/// contributions: density energy, momentum x, y, z.
void fluxElement(int I, const int *Ese, const float *Normals,
                 const float *Variables, const float *FfVariable, float *Fluxes,
                 const Float3 *FfFc[4], int Nelr) {
  const float SmoothingCoefficient = 0.2f;
  State Si = loadState(Variables, I, Nelr);
  Float3 VelocityI = computeVelocity(Si.Density, Si.Momentum);
  float SpeedSqdI = computeSpeedSqd(VelocityI);
  float SpeedI = std::sqrt(SpeedSqdI);
  float PressureI = computePressure(Si.Density, Si.DensityEnergy, SpeedSqdI);
  float SpeedOfSoundI = computeSpeedOfSound(Si.Density, PressureI);
  Float3 FcIMx, FcIMy, FcIMz, FcIDe;
  computeFluxContribution(Si.Density, Si.Momentum, Si.DensityEnergy, PressureI,
                          VelocityI, FcIMx, FcIMy, FcIMz, FcIDe);
  float FluxDensity = 0.0f, FluxDensityEnergy = 0.0f;
  Float3 FluxMomentum = {0.0f, 0.0f, 0.0f};
  for (int J = 0; J < NNB; ++J) {
    int Nb = Ese[I + J * Nelr];
    Float3 Normal = {Normals[I + (J + 0 * NNB) * Nelr],
                     Normals[I + (J + 1 * NNB) * Nelr],
                     Normals[I + (J + 2 * NNB) * Nelr]};
    float NormalLen = std::sqrt(Normal.X * Normal.X + Normal.Y * Normal.Y +
                                Normal.Z * Normal.Z);
    // The three components of the face's flux, for a neighbour (Nb) or the
    // far field: Mom the other side's momentum, De/Mx/My/Mz its flux
    // contributions.
    auto AddCentered = [&](Float3 Mom, Float3 De, Float3 Mx, Float3 My,
                          Float3 Mz) {
      float N3[3] = {Normal.X, Normal.Y, Normal.Z};
      float Mo[3] = {Mom.X, Mom.Y, Mom.Z};
      float Mi[3] = {Si.Momentum.X, Si.Momentum.Y, Si.Momentum.Z};
      const Float3 *Nbs[4] = {&De, &Mx, &My, &Mz};
      const Float3 *Is[4] = {&FcIDe, &FcIMx, &FcIMy, &FcIMz};
      for (int K = 0; K < 3; ++K) {
        float Factor = 0.5f * N3[K];
        auto C = [K](const Float3 *F) {
          return K == 0 ? F->X : K == 1 ? F->Y : F->Z;
        };
        FluxDensity += Factor * (Mo[K] + Mi[K]);
        FluxDensityEnergy += Factor * (C(Nbs[0]) + C(Is[0]));
        FluxMomentum.X += Factor * (C(Nbs[1]) + C(Is[1]));
        FluxMomentum.Y += Factor * (C(Nbs[2]) + C(Is[2]));
        FluxMomentum.Z += Factor * (C(Nbs[3]) + C(Is[3]));
      }
    };
    if (Nb >= 0) {
      State Sn = loadState(Variables, Nb, Nelr);
      Float3 VelocityNb = computeVelocity(Sn.Density, Sn.Momentum);
      float SpeedSqdNb = computeSpeedSqd(VelocityNb);
      float PressureNb =
          computePressure(Sn.Density, Sn.DensityEnergy, SpeedSqdNb);
      float SpeedOfSoundNb = computeSpeedOfSound(Sn.Density, PressureNb);
      Float3 FcNbMx, FcNbMy, FcNbMz, FcNbDe;
      computeFluxContribution(Sn.Density, Sn.Momentum, Sn.DensityEnergy,
                              PressureNb, VelocityNb, FcNbMx, FcNbMy, FcNbMz,
                              FcNbDe);
      // Artificial viscosity.
      float Factor =
          -NormalLen * SmoothingCoefficient * 0.5f *
          (SpeedI + std::sqrt(SpeedSqdNb) + SpeedOfSoundI + SpeedOfSoundNb);
      FluxDensity += Factor * (Si.Density - Sn.Density);
      FluxDensityEnergy += Factor * (Si.DensityEnergy - Sn.DensityEnergy);
      FluxMomentum.X += Factor * (Si.Momentum.X - Sn.Momentum.X);
      FluxMomentum.Y += Factor * (Si.Momentum.Y - Sn.Momentum.Y);
      FluxMomentum.Z += Factor * (Si.Momentum.Z - Sn.Momentum.Z);
      AddCentered(Sn.Momentum, FcNbDe, FcNbMx, FcNbMy, FcNbMz);
    } else if (Nb == -1) { // a wing wall
      FluxMomentum.X += Normal.X * PressureI;
      FluxMomentum.Y += Normal.Y * PressureI;
      FluxMomentum.Z += Normal.Z * PressureI;
    } else if (Nb == -2) { // the far field
      Float3 FfMomentum = {FfVariable[VarMomentum + 0],
                           FfVariable[VarMomentum + 1],
                           FfVariable[VarMomentum + 2]};
      AddCentered(FfMomentum, *FfFc[0], *FfFc[1], *FfFc[2], *FfFc[3]);
    }
  }
  Fluxes[I + VarDensity * Nelr] = FluxDensity;
  Fluxes[I + (VarMomentum + 0) * Nelr] = FluxMomentum.X;
  Fluxes[I + (VarMomentum + 1) * Nelr] = FluxMomentum.Y;
  Fluxes[I + (VarMomentum + 2) * Nelr] = FluxMomentum.Z;
  Fluxes[I + VarDensityEnergy * Nelr] = FluxDensityEnergy;
}

/// time_step's work for element I.
void timeStepElement(int I, int J, int Nelr, const float *OldVariables,
                     float *Variables, const float *StepFactors,
                     const float *Fluxes) {
  float Factor = StepFactors[I] / float(RK + 1 - J);
  for (int V : {VarDensity, VarDensityEnergy, VarMomentum + 0, VarMomentum + 1,
                VarMomentum + 2})
    Variables[I + V * Nelr] =
        OldVariables[I + V * Nelr] + Factor * Fluxes[I + V * Nelr];
}

/// The synthetic mesh (see the file header), in the host's layout.
struct Mesh {
  int Nel = 0, Nelr = 0;
  std::vector<float> Areas;   // nelr
  std::vector<int> Ese;       // i + j * nelr
  std::vector<float> Normals; // i + (j + k * NNB) * nelr
};

Mesh makeMesh(int N) {
  auto InWing = [N](int X, int Y, int Z) {
    return X >= int(0.3 * N) && X < int(0.7 * N) && Y >= int(0.45 * N) &&
           Y < int(0.55 * N) && Z >= int(0.2 * N) && Z < int(0.8 * N);
  };
  const int Perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                           {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  double H = 1.0 / N;
  int NV = N + 1;
  auto VertexId = [NV](std::array<int, 3> P) {
    return P[0] + NV * (P[1] + NV * P[2]);
  };
  std::vector<std::array<std::array<int, 3>, 4>> Tets;
  for (int Z = 0; Z < N; ++Z)
    for (int Y = 0; Y < N; ++Y)
      for (int X = 0; X < N; ++X) {
        if (InWing(X, Y, Z))
          continue;
        for (const auto &P : Perms) {
          std::array<std::array<int, 3>, 4> T;
          T[0] = {X, Y, Z};
          for (int K = 0; K < 3; ++K) {
            T[K + 1] = T[K];
            ++T[K + 1][P[K]];
          }
          Tets.push_back(T);
        }
      }
  Mesh M;
  M.Nel = int(Tets.size());
  M.Nelr =
      BlockLength * (M.Nel / BlockLength + std::min(1, M.Nel % BlockLength));
  M.Areas.assign(M.Nelr, 0.0f);
  M.Ese.assign(size_t(M.Nelr) * NNB, 0);
  M.Normals.assign(size_t(M.Nelr) * NDim * NNB, 0.0f);
  // Face K of a tetrahedron is the one opposite its vertex K.
  auto FaceKey = [&](int E, int K) {
    std::array<uint64_t, 3> Ids;
    for (int V = 0, F = 0; V < 4; ++V)
      if (V != K)
        Ids[F++] = uint64_t(VertexId(Tets[E][V]));
    std::sort(Ids.begin(), Ids.end());
    return Ids[0] | Ids[1] << 21 | Ids[2] << 42;
  };
  std::unordered_map<uint64_t, int> FaceOwner; // key -> E * 4 + K
  FaceOwner.reserve(size_t(M.Nel) * 3);
  std::vector<int> Neighbour(size_t(M.Nel) * 4, -1);
  for (int E = 0; E < M.Nel; ++E)
    for (int K = 0; K < 4; ++K) {
      auto [It, New] = FaceOwner.try_emplace(FaceKey(E, K), E * 4 + K);
      if (!New) {
        Neighbour[size_t(E) * 4 + K] = It->second / 4;
        Neighbour[size_t(It->second)] = E;
      }
    }
  for (int E = 0; E < M.Nel; ++E) {
    double P[4][3];
    for (int V = 0; V < 4; ++V)
      for (int C = 0; C < 3; ++C)
        P[V][C] = Tets[E][V][C] * H;
    M.Areas[E] = float(H * H * H / 6);
    for (int K = 0; K < 4; ++K) {
      int A = (K + 1) % 4, B = (K + 2) % 4, C = (K + 3) % 4;
      double U[3], W[3], Nrm[3], Out[3];
      for (int D = 0; D < 3; ++D) {
        U[D] = P[B][D] - P[A][D];
        W[D] = P[C][D] - P[A][D];
        Out[D] = P[K][D] - P[A][D]; // towards the element's inside
      }
      Nrm[0] = 0.5 * (U[1] * W[2] - U[2] * W[1]);
      Nrm[1] = 0.5 * (U[2] * W[0] - U[0] * W[2]);
      Nrm[2] = 0.5 * (U[0] * W[1] - U[1] * W[0]);
      // The area vector pointing into the element.
      double Dot = Nrm[0] * Out[0] + Nrm[1] * Out[1] + Nrm[2] * Out[2];
      double Sign = Dot < 0 ? -1 : 1;
      for (int D = 0; D < 3; ++D)
        M.Normals[E + (K + D * NNB) * size_t(M.Nelr)] = float(Sign * Nrm[D]);
      int Nb = Neighbour[size_t(E) * 4 + K];
      if (Nb < 0) {
        // A boundary face: on the outer box (all three vertices on one of
        // its sides) it is the far field, else it is the wing.
        bool Outer = false;
        for (int D = 0; D < 3; ++D)
          for (int Side : {0, N})
            if (Tets[E][A][D] == Side && Tets[E][B][D] == Side &&
                Tets[E][C][D] == Side)
              Outer = true;
        Nb = Outer ? -2 : -1;
      }
      M.Ese[E + K * size_t(M.Nelr)] = Nb;
    }
  }
  // The host's padding: the last element's volume and neighbours.
  int Last = M.Nel - 1;
  for (int I = M.Nel; I < M.Nelr; ++I) {
    M.Areas[I] = M.Areas[Last];
    for (int J = 0; J < NNB; ++J)
      M.Ese[I + J * size_t(M.Nelr)] = M.Ese[Last + J * size_t(M.Nelr)];
  }
  return M;
}

class CfdInstance : public Instance {
public:
  CfdInstance(int N, int Iterations) : Iterations(Iterations), M(makeMesh(N)) {
    // The far-field state, as main computes it.
    const float AngleOfAttack =
        float(3.1415926535897931 / 180.0f) * float(DegAngleOfAttack);
    FfVariable[VarDensity] = float(1.4);
    float FfPressure = float(1.0f);
    float FfSpeedOfSound =
        std::sqrt(Gamma * FfPressure / FfVariable[VarDensity]);
    float FfSpeed = float(FfMach) * FfSpeedOfSound;
    Float3 FfVelocity;
    FfVelocity.X = FfSpeed * float(std::cos(float(AngleOfAttack)));
    FfVelocity.Y = FfSpeed * float(std::sin(float(AngleOfAttack)));
    FfVelocity.Z = 0.0f;
    FfVariable[VarMomentum + 0] = FfVariable[VarDensity] * FfVelocity.X;
    FfVariable[VarMomentum + 1] = FfVariable[VarDensity] * FfVelocity.Y;
    FfVariable[VarMomentum + 2] = FfVariable[VarDensity] * FfVelocity.Z;
    FfVariable[VarDensityEnergy] =
        FfVariable[VarDensity] * (float(0.5f) * (FfSpeed * FfSpeed)) +
        (FfPressure / float(Gamma - 1.0f));
    Float3 FfMomentum = {FfVariable[VarMomentum + 0],
                         FfVariable[VarMomentum + 1],
                         FfVariable[VarMomentum + 2]};
    computeFluxContribution(FfVariable[VarDensity], FfMomentum,
                            FfVariable[VarDensityEnergy], FfPressure,
                            FfVelocity, FfFcMomentumX, FfFcMomentumY,
                            FfFcMomentumZ, FfFcDensityEnergy);
  }

  void setup(Backend &B) override {
    auto Vec3 = [&](const Float3 &F) {
      return B.create(std::vector<float>{F.X, F.Y, F.Z});
    };
    DFfVariable = B.create(std::vector<float>(FfVariable, FfVariable + NVar));
    DFfMomentumX = Vec3(FfFcMomentumX);
    DFfMomentumY = Vec3(FfFcMomentumY);
    DFfMomentumZ = Vec3(FfFcMomentumZ);
    DFfDensityEnergy = Vec3(FfFcDensityEnergy);
    DAreas = B.create(M.Areas);
    DEse = B.create(M.Ese);
    DNormals = B.create(M.Normals);
    size_t VarBytes = size_t(M.Nelr) * NVar * sizeof(float);
    DVariables = B.create(VarBytes);
    DOldVariables = B.create(VarBytes);
    DFluxes = B.create(VarBytes);
    DStepFactors = B.create(size_t(M.Nelr) * sizeof(float)); // zeroed
  }

  void run(Backend &B) override {
    Dim3 Grid = {uint32_t(M.Nelr / BlockLength)}, Group = {BlockLength};
    for (Buf V : {DVariables, DOldVariables, DFluxes})
      B.launch("initialize_variables", Grid, Group,
               {Arg::buf(V), Arg::buf(DFfVariable), Arg::i32(M.Nelr)});
    std::vector<float> Copy(size_t(M.Nelr) * NVar);
    for (int I = 0; I < Iterations; ++I) {
      // copy<float>(old_variables, variables, nelr * NVAR)
      B.read(DVariables, Copy.data(), Copy.size() * sizeof(float));
      B.write(DOldVariables, Copy.data(), Copy.size() * sizeof(float));
      B.launch("compute_step_factor", Grid, Group,
               {Arg::buf(DVariables), Arg::buf(DAreas), Arg::buf(DStepFactors),
                Arg::i32(M.Nelr)});
      for (int J = 0; J < RK; ++J) {
        B.launch("compute_flux", Grid, Group,
                 {Arg::buf(DEse), Arg::buf(DNormals), Arg::buf(DVariables),
                  Arg::buf(DFfVariable), Arg::buf(DFluxes),
                  Arg::buf(DFfDensityEnergy), Arg::buf(DFfMomentumX),
                  Arg::buf(DFfMomentumY), Arg::buf(DFfMomentumZ),
                  Arg::i32(M.Nelr)});
        B.launch("time_step", Grid, Group,
                 {Arg::i32(J), Arg::i32(M.Nelr), Arg::buf(DOldVariables),
                  Arg::buf(DVariables), Arg::buf(DStepFactors),
                  Arg::buf(DFluxes)});
      }
    }
    B.finish();
  }

  bool check(Backend &B, std::string &Why) override {
    std::vector<float> Got = B.read<float>(DVariables, size_t(M.Nelr) * NVar);
    std::vector<float> Want = reference();
    return closeEnough(Got.data(), Want.data(), Got.size(), 1e-4, 1e-5, Why);
  }

  unsigned launches() const override {
    return 3 + unsigned(Iterations) * (1 + 2 * RK);
  }

private:
  /// The whole run, serially.
  std::vector<float> reference() const {
    int Nelr = M.Nelr;
    std::vector<float> Variables(size_t(Nelr) * NVar), Old,
        Fluxes(Variables.size());
    std::vector<float> StepFactors(Nelr);
    for (int I = 0; I < Nelr; ++I)
      for (int J = 0; J < NVar; ++J)
        Variables[I + J * size_t(Nelr)] = FfVariable[J];
    const Float3 *FfFc[4] = {&FfFcDensityEnergy, &FfFcMomentumX, &FfFcMomentumY,
                             &FfFcMomentumZ};
    for (int It = 0; It < Iterations; ++It) {
      Old = Variables;
      for (int I = 0; I < Nelr; ++I)
        stepFactorElement(I, Variables.data(), M.Areas.data(),
                          StepFactors.data(), Nelr);
      for (int J = 0; J < RK; ++J) {
        for (int I = 0; I < Nelr; ++I)
          fluxElement(I, M.Ese.data(), M.Normals.data(), Variables.data(),
                      FfVariable, Fluxes.data(), FfFc, Nelr);
        for (int I = 0; I < Nelr; ++I)
          timeStepElement(I, J, Nelr, Old.data(), Variables.data(),
                          StepFactors.data(), Fluxes.data());
      }
    }
    return Variables;
  }

  int Iterations;
  Mesh M;
  float FfVariable[NVar];
  Float3 FfFcMomentumX, FfFcMomentumY, FfFcMomentumZ, FfFcDensityEnergy;
  Buf DFfVariable, DFfMomentumX, DFfMomentumY, DFfMomentumZ, DFfDensityEnergy,
      DAreas, DEse, DNormals, DVariables, DOldVariables, DFluxes, DStepFactors;
};

// The native kernels: one iteration per element (global work-item).

void initializeVariablesNative(const NativeLaunch &L) {
  float *Variables = L.ptr<float>(0);
  const float *FfVariable = L.ptr<float>(1);
  int Nelr = L.value<int32_t>(2);
#pragma omp parallel for
  for (int I = 0; I < Nelr; ++I)
    for (int J = 0; J < NVar; ++J)
      Variables[I + J * Nelr] = FfVariable[J];
}

void computeStepFactorNative(const NativeLaunch &L) {
  const float *Variables = L.ptr<float>(0), *Areas = L.ptr<float>(1);
  float *StepFactors = L.ptr<float>(2);
  int Nelr = L.value<int32_t>(3);
#pragma omp parallel for
  for (int I = 0; I < Nelr; ++I)
    stepFactorElement(I, Variables, Areas, StepFactors, Nelr);
}

void computeFluxNative(const NativeLaunch &L) {
  const int *Ese = L.ptr<int>(0);
  const float *Normals = L.ptr<float>(1), *Variables = L.ptr<float>(2);
  const float *FfVariable = L.ptr<float>(3);
  float *Fluxes = L.ptr<float>(4);
  const Float3 *FfFc[4] = {L.ptr<Float3>(5), L.ptr<Float3>(6), L.ptr<Float3>(7),
                           L.ptr<Float3>(8)};
  int Nelr = L.value<int32_t>(9);
#pragma omp parallel for
  for (int I = 0; I < Nelr; ++I)
    fluxElement(I, Ese, Normals, Variables, FfVariable, Fluxes, FfFc, Nelr);
}

void timeStepNative(const NativeLaunch &L) {
  int J = L.value<int32_t>(0), Nelr = L.value<int32_t>(1);
  const float *OldVariables = L.ptr<float>(2);
  float *Variables = L.ptr<float>(3);
  const float *StepFactors = L.ptr<float>(4), *Fluxes = L.ptr<float>(5);
#pragma omp parallel for
  for (int I = 0; I < Nelr; ++I)
    timeStepElement(I, J, Nelr, OldVariables, Variables, StepFactors, Fluxes);
}

} // namespace

KILN_CORPUS_NATIVE(initialize_variables, initializeVariablesNative);
KILN_CORPUS_NATIVE(compute_step_factor, computeStepFactorNative);
KILN_CORPUS_NATIVE(compute_flux, computeFluxNative);
KILN_CORPUS_NATIVE(time_step, timeStepNative);

KILN_CORPUS_BENCHMARK(cfd,
                      "3-D Euler finite volumes, 3-stage Runge-Kutta (Rodinia "
                      "cfd), 102486 tetrahedra, 2 iterations",
                      [](int Size) {
                        return Size == 0 ? std::make_unique<CfdInstance>(6, 2)
                                         : std::make_unique<CfdInstance>(26, 2);
                      });
