//===- CAPI.cpp - The C API on the C++ API --------------------------------===//
//
// include/kiln-c/kiln.h, implemented on include/kiln/kiln.h only. Every entry
// point runs its body through guard(): C++ exceptions stop there (bad_alloc
// becomes KILN_ERROR_OUT_OF_MEMORY, anything else KILN_ERROR_INTERNAL) and
// the thread's last-error message is set (cleared on success). Handles are
// looked up in the tables of Handles.h.
//
//===----------------------------------------------------------------------===//

#include "kiln-c/kiln.h"

#include "Handles.h"
#include "kiln/kiln.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

using namespace kiln;
using namespace kiln::capi;

namespace {

//===-- The last error ----------------------------------------------------===//

/// The calling thread's last-error message. Fallback holds a message made
/// without allocating (for out of memory).
struct LastError {
  std::string Message;
  char Fallback[192] = {};
  bool UseFallback = false;

  const char *get() const { return UseFallback ? Fallback : Message.c_str(); }
};

LastError &lastError() {
  thread_local LastError E;
  return E;
}

void clearError() {
  LastError &E = lastError();
  E.Message.clear();
  E.UseFallback = false;
}

/// May throw std::bad_alloc (guard() then says out of memory).
void setError(std::string Message) {
  LastError &E = lastError();
  E.UseFallback = false;
  E.Message = std::move(Message);
}

void setFallbackError(const char *Function, const char *What) {
  LastError &E = lastError();
  std::snprintf(E.Fallback, sizeof(E.Fallback), "%s: %s", Function, What);
  E.UseFallback = true;
}

/// The int a C caller put in an enum object. Any int is a valid C enum
/// value, but loading one outside the enumerators' range as a C++ enum is
/// undefined: every enum that comes from C is read through its bytes.
template <typename E> int rawValue(const E &V) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
  int R;
  std::memcpy(&R, &V, sizeof(R));
  return R;
}

kiln_status toStatus(api::ErrorCode Code) {
  int V = static_cast<int>(Code);
  if (V < KILN_OK || V > KILN_ERROR_KERNEL_FAULT)
    return KILN_ERROR_INTERNAL;
  return static_cast<kiln_status>(V);
}

//===-- Handles -----------------------------------------------------------===//

// The tables are never destroyed: handles may be used (and threads may exit)
// during static destruction.
Registry<std::shared_ptr<api::Device>> &devices() {
  static auto *R =
      new Registry<std::shared_ptr<api::Device>>(HandleKind::Device);
  return *R;
}
Registry<api::Kernel> &kernels() {
  static auto *R = new Registry<api::Kernel>(HandleKind::Kernel);
  return *R;
}
Registry<api::Buffer> &buffers() {
  static auto *R = new Registry<api::Buffer>(HandleKind::Buffer);
  return *R;
}
Registry<api::Stream> &streams() {
  static auto *R = new Registry<api::Stream>(HandleKind::Stream);
  return *R;
}
Registry<api::Event> &events() {
  static auto *R = new Registry<api::Event>(HandleKind::Event);
  return *R;
}

template <typename H> uint64_t bitsOf(H Handle) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(Handle));
}
template <typename H> H handleOf(uint64_t Bits) {
  return reinterpret_cast<H>(static_cast<uintptr_t>(Bits));
}

//===-- One call ----------------------------------------------------------===//

/// An argument as messages name it: "stream", or "args[2].view.type" (made
/// into text only when a message needs it, not on every launch).
struct ArgName {
  static constexpr size_t NoIndex = ~size_t(0);
  const char *Field;
  size_t Index = NoIndex; ///< in args[], or NoIndex

  ArgName(const char *Field) : Field(Field) {}
  ArgName(size_t Index, const char *Field) : Field(Field), Index(Index) {}
};

} // namespace

template <> struct fmt::formatter<ArgName> {
  constexpr auto parse(fmt::format_parse_context &Ctx) { return Ctx.begin(); }
  auto format(const ArgName &N, fmt::format_context &Ctx) const {
    if (N.Index == ArgName::NoIndex)
      return fmt::format_to(Ctx.out(), "{}", N.Field);
    return fmt::format_to(Ctx.out(), "args[{}]{}", N.Index, N.Field);
  }
};

namespace {

/// The context of one entry point: its name, for the messages of the errors
/// the C layer finds.
class Call {
public:
  explicit Call(const char *Function) : Function(Function) {}

  /// KILN_ERROR_INVALID_ARGUMENT, "FUNCTION: MESSAGE".
  template <typename... Ts>
  kiln_status invalid(fmt::format_string<Ts...> Format, Ts &&...Args) {
    setError(fmt::format("{}: {}", Function,
                         fmt::format(Format, std::forward<Ts>(Args)...)));
    return KILN_ERROR_INVALID_ARGUMENT;
  }

  /// The C++ API's status: its code, and its message as the last error.
  kiln_status status(const api::Status &S) {
    if (S.ok())
      return KILN_OK;
    kiln_status Code = toStatus(S.code());
    setError(S.message().empty()
                 ? fmt::format("{}: {}", Function, kiln_status_name(Code))
                 : S.message());
    return Code;
  }

  /// InvalidArgument for a null \p Pointer named \p Name.
  kiln_status require(const void *Pointer, ArgName Name) {
    return Pointer ? KILN_OK : invalid("{} is NULL", Name);
  }

  /// The C++ handle behind \p Handle (argument \p Name) into \p Out.
  kiln_status lookup(kiln_device Handle, ArgName Name,
                     std::shared_ptr<api::Device> &Out) {
    return lookupIn(devices(), bitsOf(Handle), Name, Out);
  }
  kiln_status lookup(kiln_kernel Handle, ArgName Name, api::Kernel &Out) {
    return lookupIn(kernels(), bitsOf(Handle), Name, Out);
  }
  kiln_status lookup(kiln_buffer Handle, ArgName Name, api::Buffer &Out) {
    return lookupIn(buffers(), bitsOf(Handle), Name, Out);
  }
  kiln_status lookup(kiln_stream Handle, ArgName Name, api::Stream &Out) {
    return lookupIn(streams(), bitsOf(Handle), Name, Out);
  }
  kiln_status lookup(kiln_event Handle, ArgName Name, api::Event &Out) {
    return lookupIn(events(), bitsOf(Handle), Name, Out);
  }

  /// Destroys \p Handle: its C++ handle is moved into \p Out.
  template <typename T>
  kiln_status take(Registry<T> &R, uint64_t Handle, ArgName Name,
                   std::optional<T> &Out) {
    return explain(R.take(Handle, Out), Handle, Name, R.kind());
  }

  /// A new handle for \p Value into \p Out.
  template <typename T, typename H>
  kiln_status insert(Registry<T> &R, T Value, H *Out) {
    uint64_t Bits = R.insert(std::move(Value));
    if (!Bits) {
      setError(fmt::format("{}: too many live {} handles", Function,
                           handleKindName(unsigned(R.kind()))));
      return KILN_ERROR_OUT_OF_MEMORY;
    }
    *Out = handleOf<H>(Bits);
    return KILN_OK;
  }

private:
  template <typename T>
  kiln_status lookupIn(Registry<T> &R, uint64_t Handle, ArgName Name, T &Out) {
    return explain(R.get(Handle, Out), Handle, Name, R.kind());
  }

  kiln_status explain(LookupResult R, uint64_t Handle, ArgName Name,
                      HandleKind Kind) {
    const char *KindName = handleKindName(unsigned(Kind));
    switch (R) {
    case LookupResult::Ok:
      return KILN_OK;
    case LookupResult::Null:
      return invalid("{} is NULL", Name);
    case LookupResult::WrongKind:
      if (const char *Other = handleKindName(handleKindOf(Handle)))
        return invalid("{} is a {} handle, not a {}", Name, Other, KindName);
      return invalid("{} is not a valid {} handle", Name, KindName);
    case LookupResult::Invalid:
      return invalid("{} is not a valid {} handle", Name, KindName);
    case LookupResult::Destroyed:
      return invalid("{} handle was destroyed", Name);
    }
    return invalid("{} is not a valid {} handle", Name, KindName);
  }

  const char *Function;
};

/// Runs \p Body for entry point \p Function: no exception leaves, and the
/// last error is cleared on success.
template <typename Fn>
kiln_status guard(const char *Function, Fn &&Body) noexcept {
  try {
    Call C(Function);
    kiln_status S = Body(C);
    if (S == KILN_OK)
      clearError();
    return S;
  } catch (const std::bad_alloc &) {
    setFallbackError(Function, "out of memory");
    return KILN_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &E) {
    try {
      setError(fmt::format("{}: internal error: {}", Function, E.what()));
    } catch (...) {
      setFallbackError(Function, "internal error");
    }
    return KILN_ERROR_INTERNAL;
  } catch (...) {
    setFallbackError(Function, "internal error (an unknown exception)");
    return KILN_ERROR_INTERNAL;
  }
}

/// Destroys \p Handle (argument \p Name) for entry point \p Function. Its
/// C++ handle is dropped after guard() has released every lock: ~Device
/// drains streams.
template <typename T, typename H>
kiln_status destroyHandle(const char *Function, Registry<T> &R, H Handle,
                          const char *Name) {
  std::optional<T> Dead;
  kiln_status S = guard(
      Function, [&](Call &C) { return C.take(R, bitsOf(Handle), Name, Dead); });
  Dead.reset();
  return S;
}

//===-- Conversions -------------------------------------------------------===//

bool validLanes(uint32_t Lanes) {
  switch (Lanes) {
  case 0:
  case 1:
  case 2:
  case 3:
  case 4:
  case 8:
  case 16:
    return true;
  }
  return false;
}

/// \p T as the C++ API's type; InvalidArgument naming \p Name when it is
/// none.
kiln_status toElementType(Call &C, kiln_element_type T, ArgName Name,
                          api::ElementType &Out) {
  int Scalar = rawValue(T.scalar);
  if (Scalar < KILN_BOOL || Scalar > KILN_UE8M0)
    return C.invalid("{}.scalar is {}, not a kiln_scalar_type", Name, Scalar);
  if (!validLanes(T.lanes))
    return C.invalid("{}.lanes is {}, not one of 0, 1, 2, 3, 4, 8, 16", Name,
                     T.lanes);
  Out = api::ElementType::line(static_cast<api::ScalarType>(Scalar), T.lanes);
  return KILN_OK;
}

kiln_element_type fromElementType(api::ElementType T) {
  return {static_cast<kiln_scalar_type>(static_cast<int>(T.Scalar)), T.Lanes};
}

kiln_status toAccess(Call &C, const kiln_access &A, ArgName Name,
                     api::Access &Out) {
  switch (rawValue(A)) {
  case KILN_ACCESS_READ:
    Out = api::Access::Read;
    return KILN_OK;
  case KILN_ACCESS_WRITE:
    Out = api::Access::Write;
    return KILN_OK;
  case KILN_ACCESS_READ_WRITE:
    Out = api::Access::ReadWrite;
    return KILN_OK;
  }
  return C.invalid("{} is {}, not a kiln_access", Name, rawValue(A));
}

kiln_access fromAccess(api::Access A) {
  switch (A) {
  case api::Access::Read:
    return KILN_ACCESS_READ;
  case api::Access::Write:
    return KILN_ACCESS_WRITE;
  case api::Access::ReadWrite:
    break;
  }
  return KILN_ACCESS_READ_WRITE;
}

kiln_status toBoundsChecked(Call &C, const kiln_bounds_check &B, ArgName Name,
                            bool &Out) {
  switch (rawValue(B)) {
  case KILN_BOUNDS_CHECK_DEFAULT:
  case KILN_BOUNDS_CHECK_ON:
    Out = true;
    return KILN_OK;
  case KILN_BOUNDS_CHECK_OFF:
    Out = false;
    return KILN_OK;
  }
  return C.invalid("{} is {}, not a kiln_bounds_check", Name, rawValue(B));
}

api::Dim3 toDim3(kiln_dim3 D) { return {D.x, D.y, D.z}; }
kiln_dim3 fromDim3(api::Dim3 D) { return {D.X, D.Y, D.Z}; }

/// \p Args as the C++ API's arguments.
/// The view \p V, its fields named \p Buf, \p TypeName and \p AccessName
/// in messages.
kiln_status toView(Call &C, const kiln_buffer_view &V, ArgName Buf,
                   ArgName TypeName, ArgName AccessName, api::Arg &Out) {
  api::Buffer B;
  api::Access Access;
  api::ElementType Type;
  if (kiln_status E = C.lookup(V.buffer, Buf, B))
    return E;
  if (kiln_status E = toElementType(C, V.type, TypeName, Type))
    return E;
  if (kiln_status E = toAccess(C, V.access, AccessName, Access))
    return E;
  uint64_t ElementCount = V.count;
  if (ElementCount == KILN_WHOLE_BUFFER) {
    uint64_t Size = B.size();
    ElementCount =
        V.byte_offset >= Size ? 0 : (Size - V.byte_offset) / Type.sizeInBytes();
  }
  Out = api::Arg::buffer(B.view(Type, V.byte_offset, ElementCount), Access);
  return KILN_OK;
}

/// The api::Arg of a KILN_ARG_TENSOR_MAP_IM2COL \p A over \p V. Counts
/// past the arrays keep their size, so that the launch refuses them.
api::Arg im2colArg(const kiln_arg &A, const api::BufferView &V,
                   const std::vector<uint64_t> &Shape,
                   const std::vector<uint64_t> &Strides, api::Access Access) {
  const kiln_im2col &I = A.im2col;
  auto Corner = [&](const int32_t *Values) {
    std::vector<int64_t> C(
        Values,
        Values + std::min<uint32_t>(I.spatial_dims, KILN_MAX_TENSOR_RANK));
    C.resize(I.spatial_dims, 0);
    return C;
  };
  return api::Arg::tensorMapIm2col(V, Shape, Strides, Corner(I.lower),
                                   Corner(I.upper), I.channels_per_pixel,
                                   I.pixels_per_column, Access);
}

kiln_status toArgs(Call &C, const api::Kernel &K, const kiln_arg *Args,
                   size_t Count, std::vector<api::Arg> &Out) {
  if (Count && !Args)
    return C.invalid("args is NULL but arg_count is {}", Count);
  // More arguments than parameters: refused before args is read or
  // anything is allocated (arg_count may be absurd: SIZE_MAX).
  size_t Params = K.parameters().size();
  if (Count > Params)
    return C.invalid("arg_count is {}, more than kernel '{}' has parameters "
                     "({})",
                     Count, K.name(), Params);
  Out.reserve(Count);
  for (size_t I = 0; I < Count; ++I) {
    const kiln_arg &A = Args[I];
    api::ElementType Type;
    int Kind = rawValue(A.kind);
    if (Kind == KILN_ARG_BUFFER || Kind == KILN_ARG_TENSOR ||
        Kind == KILN_ARG_TENSOR_MAP || Kind == KILN_ARG_TENSOR_MAP_IM2COL) {
      api::Arg View = api::Arg::u32(0);
      if (kiln_status E = toView(C, A.view, {I, ".view.buffer"},
                                 {I, ".view.type"}, {I, ".view.access"}, View))
        return E;
      if (Kind != KILN_ARG_BUFFER) {
        // A count past its array describes entries that are not there:
        // refused before anything is made of it (it may be 2^32 - 1).
        const kiln_tensor &T = A.tensor;
        std::pair<uint32_t, const char *> Counts[3] = {
            {T.rank, ".tensor.rank"}, {T.stride_count, ".tensor.stride_count"}};
        if (Kind == KILN_ARG_TENSOR_MAP)
          Counts[2] = {T.box_rank, ".tensor.box_rank"};
        else if (Kind == KILN_ARG_TENSOR_MAP_IM2COL)
          Counts[2] = {A.im2col.spatial_dims, ".im2col.spatial_dims"};
        for (const auto &[N, Field] : Counts)
          if (Field && N > KILN_MAX_TENSOR_RANK)
            return C.invalid("{} is {}, more than KILN_MAX_TENSOR_RANK ({})",
                             ArgName(I, Field), N, KILN_MAX_TENSOR_RANK);
        auto Entries = [](const uint64_t *Values, uint32_t Count) {
          std::vector<uint64_t> V(Values,
                                  Values + std::min<uint32_t>(
                                               Count, KILN_MAX_TENSOR_RANK));
          V.resize(Count, 0);
          return V;
        };
        std::vector<uint64_t> Shape = Entries(T.shape, T.rank);
        std::vector<uint64_t> Strides = Entries(T.strides, T.stride_count);
        // A tensor given with no strides is contiguous; one with a count of
        // strides that does not match is refused at launch.
        if (T.stride_count == 0 && T.rank != 0)
          Strides.clear();
        api::BufferView V = View.view();
        if (Kind == KILN_ARG_TENSOR)
          View = api::Arg::tensor(V, Shape, Strides, View.access());
        else if (Kind == KILN_ARG_TENSOR_MAP)
          View = api::Arg::tensorMap(V, Shape, Strides,
                                     Entries(T.box, T.box_rank), View.access());
        else
          View = im2colArg(A, V, Shape, Strides, View.access());
      }
      Out.push_back(std::move(View));
    } else if (Kind == KILN_ARG_VALUE) {
      if (kiln_status E =
              toElementType(C, A.value.type, {I, ".value.type"}, Type))
        return E;
      if (A.value.size > KILN_MAX_VALUE_BYTES)
        return C.invalid("{}.value.size is {}, more than {}", ArgName(I, ""),
                         A.value.size, KILN_MAX_VALUE_BYTES);
      Out.push_back(api::Arg::value(Type, A.value.bytes, A.value.size));
    } else {
      return C.invalid("{}.kind is {}, not KILN_ARG_BUFFER, KILN_ARG_VALUE, "
                       "KILN_ARG_TENSOR, KILN_ARG_TENSOR_MAP or "
                       "KILN_ARG_TENSOR_MAP_IM2COL (a zeroed kiln_arg, or a "
                       "tensor made from something else?)",
                       ArgName(I, ""), Kind);
    }
  }
  return KILN_OK;
}

kiln_arg valueArg(kiln_scalar_type Scalar, const void *Bytes, size_t Size) {
  kiln_arg A;
  std::memset(&A, 0, sizeof(A));
  A.kind = KILN_ARG_VALUE;
  A.value.type = {Scalar, 0};
  A.value.size = Size;
  std::memcpy(A.value.bytes, Bytes, Size);
  return A;
}

} // namespace

//===-- Errors and types --------------------------------------------------===//

const char *kiln_last_error(void) { return lastError().get(); }

const char *kiln_status_name(kiln_status status) {
  int V = rawValue(status);
  if (V < KILN_OK || V > KILN_ERROR_KERNEL_FAULT)
    return "unknown status";
  return api::errorCodeName(static_cast<api::ErrorCode>(V));
}

// The constructors copy enums byte for byte: they are not checked here.
kiln_element_type kiln_scalar(kiln_scalar_type scalar) {
  return kiln_line(scalar, 0);
}

kiln_element_type kiln_line(kiln_scalar_type scalar, uint32_t lanes) {
  kiln_element_type T;
  std::memcpy(&T.scalar, &scalar, sizeof(scalar));
  T.lanes = lanes;
  return T;
}

kiln_status kiln_element_type_parse(const char *text,
                                    kiln_element_type *out_type) {
  return guard("kiln_element_type_parse", [&](Call &C) {
    if (kiln_status E = C.require(text, "text"))
      return E;
    if (kiln_status E = C.require(out_type, "out_type"))
      return E;
    api::Result<api::ElementType> T = api::ElementType::parse(text);
    if (!T.ok())
      return C.invalid("{}", T.status().message());
    *out_type = fromElementType(*T);
    return KILN_OK;
  });
}

kiln_status kiln_element_type_size(kiln_element_type type,
                                   uint32_t *out_bytes) {
  return guard("kiln_element_type_size", [&](Call &C) {
    if (kiln_status E = C.require(out_bytes, "out_bytes"))
      return E;
    api::ElementType T;
    if (kiln_status E = toElementType(C, type, "type", T))
      return E;
    *out_bytes = T.sizeInBytes();
    return KILN_OK;
  });
}

//===-- Arguments ---------------------------------------------------------===//

kiln_arg kiln_arg_view(kiln_buffer buffer, kiln_element_type type,
                       uint64_t byte_offset, uint64_t count,
                       kiln_access access) {
  kiln_arg A;
  std::memset(&A, 0, sizeof(A));
  A.kind = KILN_ARG_BUFFER;
  A.view.buffer = buffer;
  A.view.byte_offset = byte_offset;
  A.view.count = count;
  A.view.type = type;
  std::memcpy(&A.view.access, &access, sizeof(access));
  return A;
}

kiln_arg kiln_arg_buffer(kiln_buffer buffer, kiln_element_type type,
                         kiln_access access) {
  return kiln_arg_view(buffer, type, 0, KILN_WHOLE_BUFFER, access);
}

kiln_arg kiln_arg_tensor(kiln_arg view, size_t rank, const uint64_t *shape,
                         size_t stride_count, const uint64_t *strides) {
  kiln_arg A = view;
  std::memset(&A.tensor, 0, sizeof(A.tensor));
  if (rawValue(view.kind) != KILN_ARG_BUFFER || (rank && !shape) ||
      (stride_count && !strides)) {
    A.kind = KILN_ARG_NONE;
    return A;
  }
  auto Clamp = [](size_t N) {
    return static_cast<uint32_t>(std::min<size_t>(N, UINT32_MAX));
  };
  A.kind = KILN_ARG_TENSOR;
  A.tensor.rank = Clamp(rank);
  A.tensor.stride_count = Clamp(stride_count);
  for (size_t I = 0; I < rank && I < KILN_MAX_TENSOR_RANK; ++I)
    A.tensor.shape[I] = shape[I];
  for (size_t I = 0; I < stride_count && I < KILN_MAX_TENSOR_RANK; ++I)
    A.tensor.strides[I] = strides[I];
  return A;
}

kiln_arg kiln_arg_tensor_map(kiln_arg tensor, size_t box_rank,
                             const uint64_t *box) {
  kiln_arg A = tensor;
  if (rawValue(tensor.kind) != KILN_ARG_TENSOR || (box_rank && !box)) {
    A.kind = KILN_ARG_NONE;
    return A;
  }
  A.kind = KILN_ARG_TENSOR_MAP;
  A.tensor.box_rank =
      static_cast<uint32_t>(std::min<size_t>(box_rank, UINT32_MAX));
  for (size_t I = 0; I < box_rank && I < KILN_MAX_TENSOR_RANK; ++I)
    A.tensor.box[I] = box[I];
  return A;
}

kiln_arg kiln_arg_tensor_map_im2col(kiln_arg tensor, size_t spatial_dims,
                                    const int32_t *pixel_box_lower_corner,
                                    const int32_t *pixel_box_upper_corner,
                                    uint32_t channels_per_pixel,
                                    uint32_t pixels_per_column) {
  kiln_arg A = tensor;
  std::memset(&A.im2col, 0, sizeof(A.im2col));
  if (rawValue(tensor.kind) != KILN_ARG_TENSOR ||
      (spatial_dims && (!pixel_box_lower_corner || !pixel_box_upper_corner))) {
    A.kind = KILN_ARG_NONE;
    return A;
  }
  A.kind = KILN_ARG_TENSOR_MAP_IM2COL;
  A.im2col.spatial_dims =
      static_cast<uint32_t>(std::min<size_t>(spatial_dims, UINT32_MAX));
  A.im2col.channels_per_pixel = channels_per_pixel;
  A.im2col.pixels_per_column = pixels_per_column;
  for (size_t I = 0; I < spatial_dims && I < KILN_MAX_TENSOR_RANK; ++I) {
    A.im2col.lower[I] = pixel_box_lower_corner[I];
    A.im2col.upper[I] = pixel_box_upper_corner[I];
  }
  return A;
}

kiln_arg kiln_arg_f32(float v) { return valueArg(KILN_F32, &v, sizeof(v)); }
kiln_arg kiln_arg_f64(double v) { return valueArg(KILN_F64, &v, sizeof(v)); }
kiln_arg kiln_arg_i32(int32_t v) { return valueArg(KILN_I32, &v, sizeof(v)); }
kiln_arg kiln_arg_u32(uint32_t v) { return valueArg(KILN_U32, &v, sizeof(v)); }
kiln_arg kiln_arg_i64(int64_t v) { return valueArg(KILN_I64, &v, sizeof(v)); }
kiln_arg kiln_arg_u64(uint64_t v) { return valueArg(KILN_U64, &v, sizeof(v)); }
kiln_arg kiln_arg_bool(bool v) {
  uint8_t Byte = v ? 1 : 0;
  return valueArg(KILN_BOOL, &Byte, 1);
}

kiln_status kiln_arg_value(kiln_element_type type, const void *bytes,
                           size_t size, kiln_arg *out_arg) {
  return guard("kiln_arg_value", [&](Call &C) {
    if (kiln_status E = C.require(out_arg, "out_arg"))
      return E;
    if (size > KILN_MAX_VALUE_BYTES)
      return C.invalid("size is {}, more than {}", size, KILN_MAX_VALUE_BYTES);
    if (size && !bytes)
      return C.invalid("bytes is NULL but size is {}", size);
    kiln_arg A;
    std::memset(&A, 0, sizeof(A));
    A.kind = KILN_ARG_VALUE;
    A.value.type = type;
    A.value.size = size;
    if (size)
      std::memcpy(A.value.bytes, bytes, size);
    *out_arg = A;
    return KILN_OK;
  });
}

//===-- Devices -----------------------------------------------------------===//

kiln_status kiln_device_config_init(kiln_device_config *config) {
  return guard("kiln_device_config_init", [&](Call &C) {
    if (kiln_status E = C.require(config, "config"))
      return E;
    std::memset(config, 0, sizeof(*config));
    // The C++ API's defaults (api::DeviceConfig), so that a config from
    // here and a NULL config make the same device.
    const api::DeviceConfig Defaults;
    config->opt_level = Defaults.OptLevel;
    config->store_mode = KILN_STORE_ENVIRONMENT;
    config->keep_warm_us = Defaults.KeepWarmMicroseconds;
    config->min_work_per_thread_us = Defaults.MinWorkPerThreadMicroseconds;
    return KILN_OK;
  });
}

kiln_status kiln_device_create(const kiln_device_config *config,
                               kiln_device *out_device) {
  return guard("kiln_device_create", [&](Call &C) {
    if (kiln_status E = C.require(out_device, "out_device"))
      return E;
    *out_device = nullptr;
    api::DeviceConfig Config;
    if (config) {
      static_assert(KILN_MAX_THREADS == api::MaxThreads,
                    "the C limit is the C++ API's");
      if (config->threads > KILN_MAX_THREADS)
        return C.invalid("config->threads is {}, above the limit of {} (0: "
                         "all cores)",
                         config->threads, KILN_MAX_THREADS);
      if (config->batch_threads > KILN_MAX_THREADS)
        return C.invalid("config->batch_threads is {}, above the limit of {} "
                         "(0: all cores)",
                         config->batch_threads, KILN_MAX_THREADS);
      Config.Threads = config->threads;
      Config.BatchThreads = config->batch_threads;
      Config.OptLevel = config->opt_level;
      Config.CPU = config->cpu ? config->cpu : "";
      Config.Features = config->features ? config->features : "";
      Config.StoreDir = config->store_dir ? config->store_dir : "";
      switch (rawValue(config->store_mode)) {
      case KILN_STORE_ENVIRONMENT:
        Config.Store = api::StoreMode::Environment;
        break;
      case KILN_STORE_OFF:
        Config.Store = api::StoreMode::Off;
        break;
      case KILN_STORE_READ_WRITE:
        Config.Store = api::StoreMode::ReadWrite;
        break;
      case KILN_STORE_READ_ONLY:
        Config.Store = api::StoreMode::ReadOnly;
        break;
      default:
        return C.invalid("config->store_mode is {}, not a kiln_store_mode",
                         rawValue(config->store_mode));
      }
      Config.MaxSharedBytes = config->max_shared_bytes;
      Config.MaxUnitsPerCube = config->max_units_per_cube;
      Config.KeepWarmMicroseconds = config->keep_warm_us;
      Config.MinWorkPerThreadMicroseconds = config->min_work_per_thread_us;
      Config.RemoteStore = config->remote_store ? config->remote_store : "";
      Config.RemoteKeyFile =
          config->remote_key_file ? config->remote_key_file : "";
      Config.RemoteReadOnly = config->remote_read_only;
      Config.RemoteTimeoutMilliseconds = config->remote_timeout_ms;
      if (config->warning_callback)
        Config.WarningSink = [Fn = config->warning_callback,
                              Data = config->warning_user_data](
                                 std::string_view Message) {
          std::string Text(Message);
          Fn(Text.c_str(), Data);
        };
    }
    api::Result<api::Device> D = api::Device::create(Config);
    if (!D.ok())
      return C.status(D.status());
    return C.insert(devices(), std::make_shared<api::Device>(std::move(*D)),
                    out_device);
  });
}

kiln_status kiln_device_destroy(kiln_device device) {
  // From the device's own callback the drain would wait for the callback.
  kiln_status Refused = guard("kiln_device_destroy", [&](Call &C) {
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    if (D->inCallback())
      return C.invalid("called from a callback of this device (its warning "
                       "or debug-print callback), which the destruction "
                       "would wait for; destroy it once the callback has "
                       "returned");
    return KILN_OK;
  });
  if (Refused != KILN_OK)
    return Refused;
  return destroyHandle("kiln_device_destroy", devices(), device, "device");
}

kiln_status kiln_device_get_info(kiln_device device,
                                 kiln_device_info *out_info) {
  return guard("kiln_device_get_info", [&](Call &C) {
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    if (kiln_status E = C.require(out_info, "out_info"))
      return E;
    kiln_device_info Info;
    std::memset(&Info, 0, sizeof(Info));
    Info.concurrency = D->concurrency();
    Info.has_store = D->hasStore();
    Info.loaded_kernel_count = D->loadedKernelCount();
    Info.warning_count = D->warningCount();
    *out_info = Info;
    return KILN_OK;
  });
}

kiln_status kiln_device_get_counters(kiln_device device,
                                     kiln_device_counters *out_counters) {
  return guard("kiln_device_get_counters", [&](Call &C) {
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    if (kiln_status E = C.require(out_counters, "out_counters"))
      return E;
    api::DeviceCounters N = D->counters();
    kiln_device_counters Out;
    std::memset(&Out, 0, sizeof(Out));
    Out.compiled = N.Compiled;
    Out.store_loads = N.StoreLoads;
    Out.launch_links = N.LaunchLinks;
    Out.launch_compiles = N.LaunchCompiles;
    *out_counters = Out;
    return KILN_OK;
  });
}

kiln_status kiln_device_synchronize(kiln_device device) {
  return guard("kiln_device_synchronize", [&](Call &C) {
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    return C.status(D->synchronize());
  });
}

kiln_status kiln_device_set_debug_print_callback(
    kiln_device device, kiln_debug_print_callback callback, void *user_data) {
  return guard("kiln_device_set_debug_print_callback", [&](Call &C) {
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    if (!callback) {
      D->setDebugPrintHandler(nullptr);
      return KILN_OK;
    }
    D->setDebugPrintHandler([callback, user_data](std::string_view Text) {
      // The callback is promised a NUL-terminated copy.
      std::string Copy(Text);
      callback(Copy.c_str(), Copy.size(), user_data);
    });
    return KILN_OK;
  });
}

kiln_status kiln_device_set_debug_print_limit(kiln_device device,
                                              uint64_t bytes) {
  return guard("kiln_device_set_debug_print_limit", [&](Call &C) {
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    D->setDebugPrintLimit(bytes);
    return KILN_OK;
  });
}

// What a launch needs looked up and converted, the same for a device and a
// stream: the target \p H, the kernel, the cube counts of an indirect launch
// (\p CubeCounts not null) and the arguments; then \p Launch(Target, Kernel,
// Counts, Args) launches.
template <typename Target, typename Handle, typename LaunchFn>
static kiln_status
launchThrough(const char *Function, Handle H, ArgName HName, kiln_kernel kernel,
              const kiln_buffer_view *const *CubeCounts, const kiln_arg *args,
              size_t arg_count, LaunchFn Launch) {
  return guard(Function, [&](Call &C) {
    Target T;
    api::Kernel K;
    std::vector<api::Arg> Args;
    api::Arg Counts = api::Arg::u32(0);
    if (kiln_status E = C.lookup(H, HName, T))
      return E;
    if (kiln_status E = C.lookup(kernel, "kernel", K))
      return E;
    if (CubeCounts) {
      if (kiln_status E = C.require(*CubeCounts, "cube_counts"))
        return E;
      if (kiln_status E =
              toView(C, **CubeCounts, "cube_counts->buffer",
                     "cube_counts->type", "cube_counts->access", Counts))
        return E;
    }
    if (kiln_status E = toArgs(C, K, args, arg_count, Args))
      return E;
    return C.status(Launch(T, K, Counts, Args));
  });
}

kiln_status kiln_device_launch(kiln_device device, kiln_kernel kernel,
                               kiln_dim3 cube_count, const kiln_arg *args,
                               size_t arg_count) {
  return launchThrough<std::shared_ptr<api::Device>>(
      "kiln_device_launch", device, "device", kernel, nullptr, args, arg_count,
      [&](auto &D, const api::Kernel &K, const api::Arg &,
          const std::vector<api::Arg> &Args) {
        return D->launch(K, toDim3(cube_count), Args);
      });
}

kiln_status kiln_device_launch_indirect(kiln_device device, kiln_kernel kernel,
                                        const kiln_buffer_view *cube_counts,
                                        const kiln_arg *args,
                                        size_t arg_count) {
  return launchThrough<std::shared_ptr<api::Device>>(
      "kiln_device_launch_indirect", device, "device", kernel, &cube_counts,
      args, arg_count,
      [](auto &D, const api::Kernel &K, const api::Arg &Counts,
         const std::vector<api::Arg> &Args) {
        return D->launchIndirect(K, Counts.view(), Args);
      });
}

//===-- Kernels -----------------------------------------------------------===//

kiln_status kiln_kernel_options_init(kiln_kernel_options *options) {
  return guard("kiln_kernel_options_init", [&](Call &C) {
    if (kiln_status E = C.require(options, "options"))
      return E;
    std::memset(options, 0, sizeof(*options));
    options->bounds_check = KILN_BOUNDS_CHECK_DEFAULT;
    return KILN_OK;
  });
}

kiln_status kiln_device_load_kernel(kiln_device device, const char *text,
                                    const char *name,
                                    const kiln_kernel_options *options,
                                    kiln_kernel *out_kernel) {
  return guard("kiln_device_load_kernel", [&](Call &C) {
    if (kiln_status E = C.require(out_kernel, "out_kernel"))
      return E;
    *out_kernel = nullptr;
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    if (kiln_status E = C.require(text, "text"))
      return E;
    api::KernelOptions Options;
    if (options) {
      Options.Id = options->id ? options->id : "";
      Options.FileName = options->file_name ? options->file_name : "";
      if (kiln_status E =
              toBoundsChecked(C, options->bounds_check, "options->bounds_check",
                              Options.BoundsChecked))
        return E;
    }
    api::Result<api::Kernel> K = D->loadKernel(
        text, name ? std::string_view(name) : std::string_view(), Options);
    if (!K.ok())
      return C.status(K.status());
    return C.insert(kernels(), std::move(*K), out_kernel);
  });
}

kiln_status kiln_device_find_kernel(kiln_device device, const char *id,
                                    kiln_bounds_check bounds_check,
                                    kiln_kernel *out_kernel) {
  return guard("kiln_device_find_kernel", [&](Call &C) {
    if (kiln_status E = C.require(out_kernel, "out_kernel"))
      return E;
    *out_kernel = nullptr;
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    if (kiln_status E = C.require(id, "id"))
      return E;
    bool Checked = true;
    if (kiln_status E =
            toBoundsChecked(C, bounds_check, "bounds_check", Checked))
      return E;
    api::Result<api::Kernel> K = D->findKernel(id, Checked);
    if (!K.ok())
      return C.status(K.status());
    return C.insert(kernels(), std::move(*K), out_kernel);
  });
}

kiln_status kiln_device_unload_kernel(kiln_device device, kiln_kernel kernel) {
  std::optional<api::Kernel> Dead;
  kiln_status S = guard("kiln_device_unload_kernel", [&](Call &C) {
    std::shared_ptr<api::Device> D;
    api::Kernel K;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    if (kiln_status E = C.lookup(kernel, "kernel", K))
      return E;
    if (kiln_status E = C.status(D->unloadKernel(K)))
      return E;
    return C.take(kernels(), bitsOf(kernel), "kernel", Dead);
  });
  Dead.reset();
  return S;
}

kiln_status kiln_kernel_destroy(kiln_kernel kernel) {
  return destroyHandle("kiln_kernel_destroy", kernels(), kernel, "kernel");
}

kiln_status kiln_kernel_prepare(kiln_kernel kernel, uint32_t variants) {
  return guard("kiln_kernel_prepare", [&](Call &C) {
    api::Kernel K;
    if (kiln_status E = C.lookup(kernel, "kernel", K))
      return E;
    if (variants & ~uint32_t(KILN_PREPARE_ALL))
      return C.invalid("variants {:#x} has bits that are no "
                       "kiln_prepare_flags",
                       variants);
    api::PrepareOptions O;
    O.Unaligned = variants & KILN_PREPARE_UNALIGNED;
    O.MayAlias = variants & KILN_PREPARE_MAY_ALIAS;
    return C.status(K.prepare(O));
  });
}

kiln_status kiln_kernel_get_info(kiln_kernel kernel,
                                 kiln_kernel_info *out_info) {
  return guard("kiln_kernel_get_info", [&](Call &C) {
    api::Kernel K;
    if (kiln_status E = C.lookup(kernel, "kernel", K))
      return E;
    if (kiln_status E = C.require(out_info, "out_info"))
      return E;
    kiln_kernel_info Info;
    std::memset(&Info, 0, sizeof(Info));
    // The strings live in the kernel's shared state, which the handle's
    // slot keeps alive.
    Info.name = K.name().c_str();
    Info.id = K.id().c_str();
    Info.cube_dim = fromDim3(K.cubeDim());
    Info.plane_dim = K.planeDim();
    Info.parameter_count = K.parameters().size();
    switch (K.origin()) {
    case api::KernelOrigin::Memory:
      Info.origin = KILN_ORIGIN_MEMORY;
      break;
    case api::KernelOrigin::Store:
      Info.origin = KILN_ORIGIN_STORE;
      break;
    case api::KernelOrigin::Compiled:
      Info.origin = KILN_ORIGIN_COMPILED;
      break;
    }
    Info.bounds_checked = K.boundsChecked();
    *out_info = Info;
    return KILN_OK;
  });
}

kiln_status kiln_kernel_get_parameter(kiln_kernel kernel, size_t index,
                                      kiln_parameter_info *out_info) {
  return guard("kiln_kernel_get_parameter", [&](Call &C) {
    api::Kernel K;
    if (kiln_status E = C.lookup(kernel, "kernel", K))
      return E;
    if (kiln_status E = C.require(out_info, "out_info"))
      return E;
    std::span<const api::ParameterInfo> Params = K.parameters();
    if (index >= Params.size())
      return C.invalid("index {} is out of range: kernel '{}' has {} "
                       "parameters",
                       index, K.name(), Params.size());
    const api::ParameterInfo &P = Params[index];
    kiln_parameter_info Info;
    std::memset(&Info, 0, sizeof(Info));
    Info.name = P.Name.c_str();
    Info.is_buffer = P.IsBuffer;
    Info.type = fromElementType(P.Type);
    Info.access = fromAccess(P.BufferAccess);
    Info.is_tensor_map = P.IsTensorMap;
    Info.is_im2col = P.IsIm2col;
    *out_info = Info;
    return KILN_OK;
  });
}

//===-- Buffers -----------------------------------------------------------===//

kiln_status kiln_buffer_allocate(uint64_t size, kiln_buffer *out_buffer) {
  return guard("kiln_buffer_allocate", [&](Call &C) {
    if (kiln_status E = C.require(out_buffer, "out_buffer"))
      return E;
    *out_buffer = nullptr;
    api::Result<api::Buffer> B = api::Buffer::allocate(size);
    if (!B.ok())
      return C.status(B.status());
    return C.insert(buffers(), std::move(*B), out_buffer);
  });
}

kiln_status kiln_buffer_wrap(void *data, uint64_t size,
                             kiln_buffer *out_buffer) {
  return guard("kiln_buffer_wrap", [&](Call &C) {
    if (kiln_status E = C.require(out_buffer, "out_buffer"))
      return E;
    *out_buffer = nullptr;
    if (!data && size)
      return C.invalid("data is NULL but size is {}", size);
    api::Result<api::Buffer> B = api::Buffer::wrap(data, size);
    if (!B.ok())
      return C.status(B.status());
    return C.insert(buffers(), std::move(*B), out_buffer);
  });
}

kiln_status kiln_buffer_data(kiln_buffer buffer, void **out_data) {
  return guard("kiln_buffer_data", [&](Call &C) {
    api::Buffer B;
    if (kiln_status E = C.lookup(buffer, "buffer", B))
      return E;
    if (kiln_status E = C.require(out_data, "out_data"))
      return E;
    *out_data = B.data();
    return KILN_OK;
  });
}

kiln_status kiln_buffer_size(kiln_buffer buffer, uint64_t *out_size) {
  return guard("kiln_buffer_size", [&](Call &C) {
    api::Buffer B;
    if (kiln_status E = C.lookup(buffer, "buffer", B))
      return E;
    if (kiln_status E = C.require(out_size, "out_size"))
      return E;
    *out_size = B.size();
    return KILN_OK;
  });
}

kiln_status kiln_buffer_destroy(kiln_buffer buffer) {
  return destroyHandle("kiln_buffer_destroy", buffers(), buffer, "buffer");
}

//===-- Streams -----------------------------------------------------------===//

kiln_status kiln_stream_create(kiln_device device, kiln_stream *out_stream) {
  return guard("kiln_stream_create", [&](Call &C) {
    if (kiln_status E = C.require(out_stream, "out_stream"))
      return E;
    *out_stream = nullptr;
    std::shared_ptr<api::Device> D;
    if (kiln_status E = C.lookup(device, "device", D))
      return E;
    api::Result<api::Stream> S = D->createStream();
    if (!S.ok())
      return C.status(S.status());
    return C.insert(streams(), std::move(*S), out_stream);
  });
}

kiln_status kiln_stream_destroy(kiln_stream stream) {
  return destroyHandle("kiln_stream_destroy", streams(), stream, "stream");
}

kiln_status kiln_stream_launch(kiln_stream stream, kiln_kernel kernel,
                               kiln_dim3 cube_count, const kiln_arg *args,
                               size_t arg_count) {
  return launchThrough<api::Stream>(
      "kiln_stream_launch", stream, "stream", kernel, nullptr, args, arg_count,
      [&](api::Stream &S, const api::Kernel &K, const api::Arg &,
          const std::vector<api::Arg> &Args) {
        return S.launch(K, toDim3(cube_count), Args);
      });
}

kiln_status kiln_stream_launch_indirect(kiln_stream stream, kiln_kernel kernel,
                                        const kiln_buffer_view *cube_counts,
                                        const kiln_arg *args,
                                        size_t arg_count) {
  return launchThrough<api::Stream>(
      "kiln_stream_launch_indirect", stream, "stream", kernel, &cube_counts,
      args, arg_count,
      [](api::Stream &S, const api::Kernel &K, const api::Arg &Counts,
         const std::vector<api::Arg> &Args) {
        return S.launchIndirect(K, Counts.view(), Args);
      });
}

kiln_status kiln_stream_copy_to_buffer(kiln_stream stream, kiln_buffer dst,
                                       uint64_t dst_offset, const void *src,
                                       uint64_t size) {
  return guard("kiln_stream_copy_to_buffer", [&](Call &C) {
    api::Stream S;
    api::Buffer B;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    if (kiln_status E = C.lookup(dst, "dst", B))
      return E;
    if (!src && size)
      return C.invalid("src is NULL but size is {}", size);
    return C.status(S.copyToBuffer(B, dst_offset, src, size));
  });
}

kiln_status kiln_stream_copy_from_buffer(kiln_stream stream, void *dst,
                                         kiln_buffer src, uint64_t src_offset,
                                         uint64_t size) {
  return guard("kiln_stream_copy_from_buffer", [&](Call &C) {
    api::Stream S;
    api::Buffer B;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    if (kiln_status E = C.lookup(src, "src", B))
      return E;
    if (!dst && size)
      return C.invalid("dst is NULL but size is {}", size);
    return C.status(S.copyFromBuffer(dst, B, src_offset, size));
  });
}

kiln_status kiln_stream_copy_buffer(kiln_stream stream, kiln_buffer dst,
                                    uint64_t dst_offset, kiln_buffer src,
                                    uint64_t src_offset, uint64_t size) {
  return guard("kiln_stream_copy_buffer", [&](Call &C) {
    api::Stream S;
    api::Buffer Dst, Src;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    if (kiln_status E = C.lookup(dst, "dst", Dst))
      return E;
    if (kiln_status E = C.lookup(src, "src", Src))
      return E;
    return C.status(S.copyBuffer(Dst, dst_offset, Src, src_offset, size));
  });
}

kiln_status kiln_stream_record_event(kiln_stream stream,
                                     kiln_event *out_event) {
  return guard("kiln_stream_record_event", [&](Call &C) {
    if (kiln_status E = C.require(out_event, "out_event"))
      return E;
    *out_event = nullptr;
    api::Stream S;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    api::Result<api::Event> Ev = S.record();
    if (!Ev.ok())
      return C.status(Ev.status());
    return C.insert(events(), std::move(*Ev), out_event);
  });
}

kiln_status kiln_stream_wait_event(kiln_stream stream, kiln_event event) {
  return guard("kiln_stream_wait_event", [&](Call &C) {
    api::Stream S;
    api::Event Ev;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    if (kiln_status E = C.lookup(event, "event", Ev))
      return E;
    return C.status(S.wait(Ev));
  });
}

kiln_status kiln_stream_synchronize(kiln_stream stream) {
  return guard("kiln_stream_synchronize", [&](Call &C) {
    api::Stream S;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    return C.status(S.synchronize());
  });
}

kiln_status kiln_stream_status(kiln_stream stream) {
  return guard("kiln_stream_status", [&](Call &C) {
    api::Stream S;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    return C.status(S.status());
  });
}

kiln_status kiln_stream_reset_error(kiln_stream stream,
                                    kiln_status *out_cleared) {
  return guard("kiln_stream_reset_error", [&](Call &C) {
    api::Stream S;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    if (S.inCallback()) // refused: it would wait for this callback
      return C.status(S.resetError());
    api::Status Cleared = S.resetError();
    if (out_cleared)
      *out_cleared = toStatus(Cleared.code());
    return KILN_OK;
  });
}

kiln_status kiln_stream_cancel(kiln_stream stream) {
  return guard("kiln_stream_cancel", [&](Call &C) {
    api::Stream S;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    return C.status(S.cancel());
  });
}

kiln_status kiln_stream_set_launch_timeout(kiln_stream stream,
                                           uint64_t milliseconds) {
  return guard("kiln_stream_set_launch_timeout", [&](Call &C) {
    api::Stream S;
    if (kiln_status E = C.lookup(stream, "stream", S))
      return E;
    return C.status(S.setLaunchTimeout(milliseconds));
  });
}

//===-- Events ------------------------------------------------------------===//

kiln_status kiln_event_destroy(kiln_event event) {
  return destroyHandle("kiln_event_destroy", events(), event, "event");
}

kiln_status kiln_event_synchronize(kiln_event event) {
  return guard("kiln_event_synchronize", [&](Call &C) {
    api::Event Ev;
    if (kiln_status E = C.lookup(event, "event", Ev))
      return E;
    return C.status(Ev.synchronize());
  });
}

kiln_status kiln_event_query(kiln_event event, bool *out_complete) {
  return guard("kiln_event_query", [&](Call &C) {
    api::Event Ev;
    if (kiln_status E = C.lookup(event, "event", Ev))
      return E;
    if (kiln_status E = C.require(out_complete, "out_complete"))
      return E;
    *out_complete = Ev.isComplete();
    return KILN_OK;
  });
}

//===-- Collectives -------------------------------------------------------===//

kiln_status kiln_all_reduce(const kiln_collective_member *members,
                            size_t member_count, kiln_reduce_op op) {
  return guard("kiln_all_reduce", [&](Call &C) {
    if (member_count && !members)
      return C.invalid("members is NULL but member_count is {}", member_count);
    int Op = rawValue(op);
    if (Op < KILN_REDUCE_SUM || Op > KILN_REDUCE_MIN)
      return C.invalid("op is {}, not a kiln_reduce_op", Op);
    std::vector<api::CollectiveMember> Members(member_count);
    for (size_t I = 0; I < member_count; ++I) {
      std::string Stream = fmt::format("members[{}].stream", I);
      std::string Buffer = fmt::format("members[{}].view.buffer", I);
      std::string Type = fmt::format("members[{}].view.type", I);
      std::string Access = fmt::format("members[{}].view.access", I);
      if (kiln_status E =
              C.lookup(members[I].stream, Stream.c_str(), Members[I].OnStream))
        return E;
      api::Arg View = api::Arg::u32(0);
      if (kiln_status E = toView(C, members[I].view, Buffer.c_str(),
                                 Type.c_str(), Access.c_str(), View))
        return E;
      if (View.access() != api::Access::ReadWrite)
        return C.invalid("{} must be KILN_ACCESS_READ_WRITE: the collective "
                         "reads and writes the view",
                         Access);
      Members[I].View = View.view();
    }
    return C.status(
        api::allReduce(Members, static_cast<api::ReduceOp>(Op)));
  });
}
