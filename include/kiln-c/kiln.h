/*===- kiln-c/kiln.h - Kiln's C API -------------------------------*- C -*-===*\
|*                                                                            *|
|* The C99 interface to Kiln, for runtimes written in C, Rust, Python, Zig or *|
|* anything else with a C FFI. It is a thin layer over the C++ API           *|
|* (kiln/kiln.h): the same model, the same error codes, the same messages.   *|
|* docs/C-API.md is the short reference; docs/API.md explains the model.     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/*
 * THE MODEL
 *
 *   kiln_device   the CPU device: loads (compiles) kernels, runs the cubes.
 *   kiln_kernel   a loaded kernel, launched any number of times.
 *   kiln_buffer   host memory: allocated by Kiln, or the caller's, wrapped.
 *   kiln_stream   an in-order queue of launches and copies on a device;
 *                 submitting returns at once.
 *   kiln_event    a point in a stream, waited on by the host or by another
 *                 stream.
 *   kiln_arg      one launch argument: a view of a buffer (byte offset,
 *                 element type, element count, access) or a value.
 *
 * ERRORS
 *
 * Every function that can fail returns a kiln_status: KILN_OK (0) or an error
 * code. Results come back through out-parameters (named out_*), written only
 * on success, except that an out-parameter for a new handle is set to NULL on
 * failure (when the out-parameter itself is not NULL).
 *
 * Each thread has a *last-error message*, returned by kiln_last_error():
 *   - every function returning kiln_status sets it: to the error's message
 *     on failure, to "" on success (success clears it);
 *   - the functions that cannot fail (kiln_last_error, kiln_status_name, the
 *     kiln_arg_* and kiln_scalar/kiln_line constructors that return a value)
 *     leave it as it is;
 *   - the message of a failed *operation* is the C++ API's message as is: a
 *     kernel that does not verify gives every located diagnostic,
 *     "FILE:LINE:COL: error: MESSAGE", one a line; an invalid launch names
 *     the parameter ("argument 3 (%n): expected a value of type u32, ...");
 *   - a misuse found by the C layer itself (a NULL handle or pointer, a
 *     destroyed handle, a malformed kiln_arg) is KILN_ERROR_INVALID_ARGUMENT
 *     with a message that starts with the function's name and names the
 *     argument: "kiln_stream_launch: stream is NULL",
 *     "kiln_stream_launch: stream handle was destroyed",
 *     "kiln_stream_launch: args[2].view.buffer is NULL".
 *     Nothing has been done when such an error is returned: in particular a
 *     stream is not failed by it.
 * The pointer returned by kiln_last_error() stays valid until the next call
 * on the same thread of a function that sets it.
 *
 * No C++ exception ever leaves this API: memory exhaustion inside a call is
 * KILN_ERROR_OUT_OF_MEMORY, anything else unexpected KILN_ERROR_INTERNAL.
 *
 * HANDLES AND THEIR LIFETIME
 *
 * A handle (kiln_device, kiln_kernel, kiln_buffer, kiln_stream, kiln_event)
 * is an opaque value that a function returns through an out_* parameter
 * (kiln_device_create, kiln_device_load_kernel, kiln_buffer_allocate, ...),
 * owned by the caller until it is released by the matching *_destroy.
 * Handles are not pointers to memory: never dereference one. NULL is never a
 * valid handle, and a handle may be copied freely (it is a value; all copies
 * name one object). At most 2^24 - 1 handles of one type are live at once
 * (beyond: KILN_ERROR_OUT_OF_MEMORY).
 *
 * Using a handle after it was destroyed is a bug of the caller's, like using
 * memory after free(). Kiln nevertheless detects it: a handle is an index
 * into a per-type table of Kiln's together with a generation number and a
 * type tag; destroying it bumps the generation of its slot, and every
 * function checks the handle against the table first. So a destroyed handle
 * (even once its slot has been reused by a newer handle), a handle of the
 * wrong type, or a made-up value gives KILN_ERROR_INVALID_ARGUMENT
 * ("kiln_event_query: event handle was destroyed") and never touches freed
 * memory. The check is exact as long as a slot is reused less than 2^31
 * times (the generation's range); the table's memory is never given back.
 *
 * Destroying a handle releases the caller's reference only: work already
 * queued that uses the object (a launch binding a buffer, a stream's queued
 * work, a kernel being launched) keeps what it needs alive until it has run.
 *
 * THREADS
 *
 * Every function may be called from any thread, and concurrently with any
 * other, with the rules of the C++ API: one stream is one in-order queue
 * (submissions from several threads interleave in the order they arrive).
 * Destroying a handle while another thread still uses it is a bug of the
 * caller's, but it is memory-safe: the other call either runs on the object
 * as it was or fails with KILN_ERROR_INVALID_ARGUMENT.
 *
 * Handles are 64-bit values; Kiln supports 64-bit hosts only.
 */

#ifndef KILN_C_KILN_H
#define KILN_C_KILN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Status codes and errors -------------------------------------------===*/

/** What went wrong; the values are kiln::api::ErrorCode's and never change. */
typedef enum kiln_status {
  /** Success. */
  KILN_OK = 0,
  /** A NULL, destroyed, wrong-type or out-of-range argument of a call. */
  KILN_ERROR_INVALID_ARGUMENT = 1,
  /** The kernel does not parse or does not verify; the message holds every
   * located diagnostic ("FILE:LINE:COL: error: ..."). */
  KILN_ERROR_INVALID_KERNEL = 2,
  /** The launch does not fit the kernel: argument count, kinds, types,
   * access, a view's bounds or element alignment, cube count. The message
   * names the parameter. (Overlapping views are not an error: they get the
   * variant compiled for buffers that may alias.) */
  KILN_ERROR_INVALID_LAUNCH = 3,
  /** Memory could not be had. */
  KILN_ERROR_OUT_OF_MEMORY = 4,
  /** The persistent store could not be used as asked. Returned only by
   * kiln_device_create, for a config with store_mode KILN_STORE_READ_WRITE
   * and a non-empty store_dir whose store folder cannot be made or trusted
   * (it must be a folder of this user's that no one else can write). Any
   * other store never fails a call: a store that cannot be used only costs
   * recompilations (and a warning: see kiln_device_config.warning_callback). */
  KILN_ERROR_STORE = 5,
  /** No such kernel (a name not in the text, an id not loaded). */
  KILN_ERROR_NOT_FOUND = 6,
  /** The work was not run because a stream it waited for (through an event)
   * failed, or because its device was destroyed; or a launch was stopped
   * while it ran, by kiln_stream_cancel or at its deadline
   * (kiln_stream_set_launch_timeout). (Work submitted to a
   * failed stream gets that stream's own failure back, whatever its code.) */
  KILN_ERROR_CANCELLED = 7,
  /** Anything else: a bug of Kiln's, or a host that cannot run it. */
  KILN_ERROR_INTERNAL = 8,
  /** The launch ran, but its kernel misused a barrier object in a way only
   * running it shows (a wait whose phase can never complete, more arrivals
   * than a phase expects; docs/LangRef.md §13.5). Every cube ran to its end;
   * what the launch wrote is unspecified. The message names the operation. */
  KILN_ERROR_KERNEL_FAULT = 9
} kiln_status;

/** The calling thread's last-error message: "" when the last call that sets
 * it succeeded (see ERRORS above). Never NULL. Valid until the next call on
 * this thread of a function that returns kiln_status. Never fails; does not
 * change the message. */
const char *kiln_last_error(void);

/** "ok", "invalid argument", "invalid kernel", "invalid launch", "out of
 * memory", "store failure", "not found", "cancelled", "internal error",
 * "kernel fault"; and
 * "unknown status" for a value that is none of those. A static string. Never
 * fails; does not change the last-error message. */
const char *kiln_status_name(kiln_status status);

/*===-- Element types -----------------------------------------------------===*/

/** The IR's scalar types, in the IR's order (docs/LangRef.md). */
typedef enum kiln_scalar_type {
  KILN_BOOL = 0,
  KILN_I8 = 1,
  KILN_I16 = 2,
  KILN_I32 = 3,
  KILN_I64 = 4,
  KILN_U8 = 5,
  KILN_U16 = 6,
  KILN_U32 = 7,
  KILN_U64 = 8,
  KILN_F16 = 9,
  KILN_BF16 = 10,
  KILN_F32 = 11,
  KILN_F64 = 12,
  /* Minifloat storage types (docs/LangRef.md §3.3): one byte each. */
  KILN_F8E4M3 = 13,
  KILN_F8E5M2 = 14,
  KILN_F6E2M3 = 15,
  KILN_F6E3M2 = 16,
  KILN_F4E2M1 = 17,
  KILN_F4E2M1X2 = 18,
  KILN_UE8M0 = 19
} kiln_scalar_type;

/** The element type of a buffer view or of a value: a scalar (lanes 0), or a
 * line `vec<N x T>` of N = lanes in {1, 2, 3, 4, 8, 16} (lanes packed in
 * memory: a vec<3 x f32> is 12 bytes). {KILN_F32, 0} is f32; {KILN_F32, 1}
 * is vec<1 x f32>, a different type. A zeroed kiln_element_type is bool. */
typedef struct kiln_element_type {
  kiln_scalar_type scalar;
  uint32_t lanes;
} kiln_element_type;

/** {scalar, 0}. Never fails; does not change the last-error message. */
kiln_element_type kiln_scalar(kiln_scalar_type scalar);
/** {scalar, lanes}: vec<lanes x scalar>. Not checked here (a bad lane count
 * is refused where the type is used). Never fails; does not change the
 * last-error message. */
kiln_element_type kiln_line(kiln_scalar_type scalar, uint32_t lanes);

/** Parses the IR spelling of a type ("f32", "vec<4 x f32>") into
 * *out_type.
 * KILN_ERROR_INVALID_ARGUMENT: text or out_type NULL, or text is not a
 * type. */
kiln_status kiln_element_type_parse(const char *text,
                                    kiln_element_type *out_type);

/** The bytes of one element of \p type into *out_bytes (a vec<3 x f32> is
 * 12, bool 1).
 * KILN_ERROR_INVALID_ARGUMENT: out_bytes NULL, a scalar out of range or a
 * lane count not in {0, 1, 2, 3, 4, 8, 16}. */
kiln_status kiln_element_type_size(kiln_element_type type, uint32_t *out_bytes);

/** What a kernel may do with a buffer parameter, or what a binding allows. */
typedef enum kiln_access {
  KILN_ACCESS_READ = 0,
  KILN_ACCESS_WRITE = 1,
  KILN_ACCESS_READ_WRITE = 2
} kiln_access;

/** A cube count or a cube shape. All three must be set: {n, 1, 1} is n cubes
 * in a line. A cube count with a zero anywhere is a launch of no cubes: it
 * succeeds and runs nothing (as vkCmdDispatch) -- beware `{n}` in C, which
 * leaves y and z zero. More than 2^32 - 1 cubes in all is
 * KILN_ERROR_INVALID_LAUNCH. */
typedef struct kiln_dim3 {
  uint32_t x, y, z;
} kiln_dim3;

/*===-- Handles -----------------------------------------------------------===*/

/** The CPU device. */
typedef struct kiln_device_s *kiln_device;
/** A loaded kernel. */
typedef struct kiln_kernel_s *kiln_kernel;
/** Host memory a launch binds. */
typedef struct kiln_buffer_s *kiln_buffer;
/** An in-order queue of work on a device. */
typedef struct kiln_stream_s *kiln_stream;
/** A point in a stream's work. */
typedef struct kiln_event_s *kiln_event;

/*===-- Launch arguments --------------------------------------------------===*/

/** The kind of a kiln_arg. 0 is no kind: a zeroed kiln_arg is refused. */
typedef enum kiln_arg_kind {
  KILN_ARG_NONE = 0,
  /** A view of a buffer, for a buffer parameter: kiln_arg.view. */
  KILN_ARG_BUFFER = 1,
  /** A value, for a value parameter: kiln_arg.value. */
  KILN_ARG_VALUE = 2,
  /** A view bound as a tensor (docs/LangRef.md §16), for a buffer
   * parameter: kiln_arg.view and kiln_arg.tensor (its box unused). */
  KILN_ARG_TENSOR = 3,
  /** A tensor map (docs/LangRef.md §17), for a tensor_map parameter:
   * kiln_arg.view and kiln_arg.tensor with its box. */
  KILN_ARG_TENSOR_MAP = 4,
  /** An im2col tensor map (docs/LangRef.md §17.7), for a tensor_map
   * parameter declared im2col: kiln_arg.view, kiln_arg.tensor (its box
   * unused) and kiln_arg.im2col. */
  KILN_ARG_TENSOR_MAP_IM2COL = 5
} kiln_arg_kind;

/** The most dimensions of a tensor binding; of a tensor map; the largest
 * box dimension of a tensor map. */
#define KILN_MAX_TENSOR_RANK 8
#define KILN_MAX_TENSOR_MAP_RANK 5
#define KILN_MAX_TENSOR_MAP_BOX_DIM 256
/** Im2col tensor maps: the most channels per pixel and pixels per column,
 * and the range of a pixel box corner. */
#define KILN_MAX_IM2COL_CHANNELS 256
#define KILN_MAX_IM2COL_PIXELS 1024
#define KILN_MIN_IM2COL_CORNER (-32768)
#define KILN_MAX_IM2COL_CORNER 32767

/** kiln_buffer_view.count meaning "every whole element from byte_offset to
 * the end of the buffer". */
#define KILN_WHOLE_BUFFER UINT64_MAX

/** The bytes a value argument holds at most: a vec<16 x f64>. */
#define KILN_MAX_VALUE_BYTES 128

/** The most threads kiln_device_config.threads and batch_threads may ask
 * for: far above any machine's cores (more than the cores is capped to
 * them), low enough that a count no machine has is refused as a mistake. */
#define KILN_MAX_THREADS 4096

/** A typed window into a buffer (a tensor in a runtime's memory pool): count
 * elements of type starting byte_offset bytes in. Any byte offset that is a
 * multiple of the element's alignment (its scalar's size) may be bound.
 * Checked at launch (bounds, alignment, access), not when made. */
typedef struct kiln_buffer_view {
  kiln_buffer buffer;
  uint64_t byte_offset;
  /** Elements, or KILN_WHOLE_BUFFER. */
  uint64_t count;
  kiln_element_type type;
  /** What the binding allows: a KILN_ACCESS_READ binding is refused for a
   * parameter the kernel may write. */
  kiln_access access;
} kiln_buffer_view;

/** A value given by its bytes: size bytes of bytes[], in the host's byte
 * order, lanes packed, bool one byte (0 or 1). A size other than the type's
 * is refused at launch. */
typedef struct kiln_value {
  kiln_element_type type;
  size_t size;
  uint8_t bytes[KILN_MAX_VALUE_BYTES];
} kiln_value;

/** One launch argument, in parameter order: kind says which member counts
 * (the other is ignored). The buffer handle of a view is not owned by the
 * kiln_arg; it must be live when the launch is submitted (the launch then
 * keeps the memory alive until it has run). */
/** The shape and strides of a tensor binding, in elements (a line counts
 * as one), outermost first, and a tensor map's box. The counts are as
 * given (at most KILN_MAX_TENSOR_RANK entries of each array are kept; a
 * larger count is refused at launch). */
typedef struct kiln_tensor {
  uint32_t rank;         /**< shape entries: 1..KILN_MAX_TENSOR_RANK */
  uint32_t stride_count; /**< strides entries: rank */
  uint32_t box_rank;     /**< tensor maps: box entries, rank */
  uint32_t reserved;     /**< 0 */
  uint64_t shape[KILN_MAX_TENSOR_RANK];
  uint64_t strides[KILN_MAX_TENSOR_RANK];
  uint64_t box[KILN_MAX_TENSOR_RANK];
} kiln_tensor;

/** The im2col parameters of an im2col tensor map (docs/LangRef.md
 * §17.7): the pixel box's corners, one per spatial dimension (rank - 2),
 * and what one load copies. */
typedef struct kiln_im2col {
  uint32_t spatial_dims;       /**< entries of each corner: rank - 2 */
  uint32_t channels_per_pixel; /**< 1..KILN_MAX_IM2COL_CHANNELS */
  uint32_t pixels_per_column;  /**< 1..KILN_MAX_IM2COL_PIXELS */
  uint32_t reserved;           /**< 0 */
  int32_t lower[KILN_MAX_TENSOR_RANK];
  int32_t upper[KILN_MAX_TENSOR_RANK];
} kiln_im2col;

typedef struct kiln_arg {
  kiln_arg_kind kind;
  kiln_buffer_view view;
  kiln_value value;
  /** KILN_ARG_TENSOR, KILN_ARG_TENSOR_MAP and KILN_ARG_TENSOR_MAP_IM2COL
   * only (added after the other members, which keep their offsets). */
  kiln_tensor tensor;
  /** KILN_ARG_TENSOR_MAP_IM2COL only (added after the other members). */
  kiln_im2col im2col;
} kiln_arg;

/* Constructors. They never fail and do not change the last-error message;
 * what they make is checked when it is launched. */

/** A view of count elements of type, byte_offset bytes into buffer
 * (count may be KILN_WHOLE_BUFFER). */
kiln_arg kiln_arg_view(kiln_buffer buffer, kiln_element_type type,
                       uint64_t byte_offset, uint64_t count,
                       kiln_access access);
/** The whole buffer as elements of type (its size / the element's size). */
kiln_arg kiln_arg_buffer(kiln_buffer buffer, kiln_element_type type,
                         kiln_access access);
/** \p view (a KILN_ARG_BUFFER from kiln_arg_view or kiln_arg_buffer) as a
 * tensor of \p rank dimensions, \p shape[rank] and \p strides[stride_count]
 * in elements, outermost first (docs/LangRef.md §16); strides NULL with
 * stride_count 0: contiguous row-major. A rank or stride_count above
 * KILN_MAX_TENSOR_RANK (past the arrays) is KILN_ERROR_INVALID_ARGUMENT at
 * launch, before anything is made of it. Checked at launch, naming the
 * parameter: rank 1 to KILN_MAX_TENSOR_RANK, stride_count equal to rank,
 * every value and the shape's product within u32. Anything but a
 * KILN_ARG_BUFFER as \p view, or NULL arrays with non-zero counts, give a
 * kiln_arg of kind KILN_ARG_NONE, refused at launch. */
kiln_arg kiln_arg_tensor(kiln_arg view, size_t rank, const uint64_t *shape,
                         size_t stride_count, const uint64_t *strides);
/** \p tensor (from kiln_arg_tensor) as a tensor map with a box of
 * \p box_rank dimensions (docs/LangRef.md §17), for a tensor_map
 * parameter. Checked at launch: rank 1 to KILN_MAX_TENSOR_MAP_RANK, the
 * rank the kernel's copies use, box_rank equal to it, box dimensions 1 to
 * KILN_MAX_TENSOR_MAP_BOX_DIM. Anything but a KILN_ARG_TENSOR, or a NULL box
 * with a non-zero count, gives a kiln_arg of kind KILN_ARG_NONE. */
kiln_arg kiln_arg_tensor_map(kiln_arg tensor, size_t box_rank,
                             const uint64_t *box);
/** \p tensor (from kiln_arg_tensor, rank 3 to 5: N, the spatial
 * dimensions, C) as an im2col tensor map (docs/LangRef.md §17.7), for a
 * tensor_map parameter declared im2col: the pixel box's corners
 * \p pixel_box_lower_corner[spatial_dims] and
 * \p pixel_box_upper_corner[spatial_dims], and what one load copies.
 * Checked at launch, naming the parameter: spatial_dims equal to the rank
 * - 2, corners KILN_MIN_IM2COL_CORNER to KILN_MAX_IM2COL_CORNER, a
 * non-empty pixel box, channels_per_pixel 1 to KILN_MAX_IM2COL_CHANNELS,
 * pixels_per_column 1 to KILN_MAX_IM2COL_PIXELS. Anything but a
 * KILN_ARG_TENSOR, or NULL corners with a non-zero count, gives a kiln_arg
 * of kind KILN_ARG_NONE. */
kiln_arg kiln_arg_tensor_map_im2col(kiln_arg tensor, size_t spatial_dims,
                                    const int32_t *pixel_box_lower_corner,
                                    const int32_t *pixel_box_upper_corner,
                                    uint32_t channels_per_pixel,
                                    uint32_t pixels_per_column);
kiln_arg kiln_arg_f32(float v);
kiln_arg kiln_arg_f64(double v);
kiln_arg kiln_arg_i32(int32_t v);
kiln_arg kiln_arg_u32(uint32_t v);
kiln_arg kiln_arg_i64(int64_t v);
kiln_arg kiln_arg_u64(uint64_t v);
kiln_arg kiln_arg_bool(bool v);

/** A value of \p type from its \p size bytes at \p bytes (f16, bf16, lines
 * and the other types without a constructor above) into *out_arg.
 * KILN_ERROR_INVALID_ARGUMENT: out_arg NULL, bytes NULL with a non-zero
 * size, size above KILN_MAX_VALUE_BYTES. (A size that is not the type's is
 * refused at launch, with the parameter named.) */
kiln_status kiln_arg_value(kiln_element_type type, const void *bytes,
                           size_t size, kiln_arg *out_arg);

/*===-- Devices -----------------------------------------------------------===*/

/** Which persistent store a device uses. */
typedef enum kiln_store_mode {
  /** KILN_CACHE decides (the default; on unless KILN_CACHE=0). */
  KILN_STORE_ENVIRONMENT = 0,
  /** None: kernels are kept in memory only. */
  KILN_STORE_OFF = 1,
  /** Read and write, whatever KILN_CACHE says. */
  KILN_STORE_READ_WRITE = 2,
  /** Serve stored kernels, never write. */
  KILN_STORE_READ_ONLY = 3
} kiln_store_mode;

/** How a device is made. Start from kiln_device_config_init(): a zeroed
 * struct is valid too, but asks for opt_level 0, keep_warm_us 0 and
 * min_work_per_thread_us 0. Strings are copied by kiln_device_create; NULL
 * and "" mean the default. A binding that declares the struct itself must
 * declare every field, in this order (keep_warm_us, min_work_per_thread_us,
 * warning_callback and warning_user_data were added, then the four remote_
 * fields last; kiln_device_info
 * gained warning_count): kiln_device_config_init writes,
 * and kiln_device_create reads, the whole struct. */
typedef struct kiln_device_config {
  /** Threads the cubes run on; 0: all cores; at most KILN_MAX_THREADS. */
  uint32_t threads;
  /** Compile threads of batch loads; 0: all cores; at most
   * KILN_MAX_THREADS. */
  uint32_t batch_threads;
  /** LLVM optimisation level, 0..3 (kiln_device_config_init: 3). */
  uint32_t opt_level;
  /** The CPU to compile for; NULL or "": the host CPU. Else a CPU LLVM knows
   * ("znver3"), x86-64, whose instruction set the host has. */
  const char *cpu;
  /** `-mattr`-style feature overrides on top of the host's ("-avx512f");
   * NULL or "": the host's. A feature LLVM does not know, one the host
   * lacks, or one that leaves x86-64 ("-sse2") is refused. */
  const char *features;
  /** The store root; NULL or "": KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln,
   * else ~/.cache/kiln. */
  const char *store_dir;
  kiln_store_mode store_mode;
  /** Shared memory a cube may use; 0: the default (64 KiB). */
  uint64_t max_shared_bytes;
  /** Units a cube may have; 0: the default (1024). */
  uint32_t max_units_per_cube;
  /** Microseconds that up to three of the device's worker threads keep
   * spinning, waiting for more work, after a launch that used the workers
   * (like OpenMP's KMP_BLOCKTIME): a launch within that time does not pay
   * for waking them, at the cost of CPU time while the device is idle. 0
   * lets them sleep at once (kiln_device_config_init: 2000). */
  uint32_t keep_warm_us;
  /** The least work, in microseconds, a launch gives each of its threads,
   * by the kernel's cost per cube measured in its earlier launches (a
   * kernel's first launch uses every thread): a launch gets its work
   * divided by this, rounded down, as its count of threads, so one worth
   * less than twice this runs on the calling thread, one worth a few times
   * it on about that many threads. 0: every launch of more than one cube
   * is spread over every thread (kiln_device_config_init: 10). */
  uint32_t min_work_per_thread_us;
  /** Called with each warning of the device (a damaged store entry purged
   * and recompiled, a store folder not trusted, an entry that could not be
   * written): one line of text, NUL-terminated, valid during the call, and
   * \p warning_user_data. It may be called from any thread, also from
   * several at once, always with no Kiln lock held: it may call Kiln, the
   * device included (kiln_device_destroy of the device is refused there:
   * docs/C-API.md, "Callbacks"). Kiln never writes to stderr itself: NULL
   * (the default) only counts them (kiln_device_info.warning_count). */
  void (*warning_callback)(const char *message, void *user_data);
  void *warning_user_data;
  /** The store's remote tier, shared by a fleet of machines (docs/Store.md,
   * "The remote tier"): NULL or "" takes KILN_REMOTE and its companion
   * variables (none when unset); "off": none; else the server's address,
   * "redis://HOST[:PORT][/DB]" or "unix:///PATH[?db=N]". */
  const char *remote_store;
  /** The fleet key file (NULL or "": KILN_REMOTE_KEY); required with a
   * tier, there is no default key. */
  const char *remote_key_file;
  /** Take entries from the tier, never publish to it. */
  bool remote_read_only;
  /** Connect and request timeout of the tier in ms; 0:
   * KILN_REMOTE_TIMEOUT_MS, else 20. */
  uint32_t remote_timeout_ms;
} kiln_device_config;

/** What kiln_device_get_info reports. */
typedef struct kiln_device_info {
  /** Threads the cubes run on. */
  uint32_t concurrency;
  /** Whether a persistent store is in use: enabled, and its folder made
   * (read-only: present) and trusted. */
  bool has_store;
  /** Kernels the device holds in memory. */
  size_t loaded_kernel_count;
  /** Warnings the device met so far (see warning_callback). */
  uint64_t warning_count;
} kiln_device_info;

/** What kiln_device_get_counters reports, in kernel variants since the
 * device was created. */
typedef struct kiln_device_counters {
  /** Compiled (by loads, kiln_kernel_prepare and launches). */
  uint64_t compiled;
  /** Loaded from the persistent store instead of compiled. */
  uint64_t store_loads;
  /** Linked by a launch itself, as no load or prepare had made them ready
   * (compiled, or loaded from the store or the device's memory). */
  uint64_t launch_links;
  /** Of launch_links, those compiled: 0 when every launch found its variant
   * ready. */
  uint64_t launch_compiles;
} kiln_device_counters;

/** Fills *config with the defaults: all zero but opt_level 3, keep_warm_us
 * 2000 and min_work_per_thread_us 10.
 * KILN_ERROR_INVALID_ARGUMENT: config NULL. */
kiln_status kiln_device_config_init(kiln_device_config *config);

/** A new device into *out_device, configured by *config (NULL: the
 * defaults of kiln_device_config_init). Owned by the caller: release it with
 * kiln_device_destroy.
 * KILN_ERROR_INVALID_ARGUMENT: out_device NULL, opt_level above 3,
 * threads or batch_threads above KILN_MAX_THREADS, a cpu or features
 * refused (see kiln_device_config), a store_mode out of range, remote
 * settings that cannot work (a bad address,
 * a key file missing or readable by others; the message says which).
 * KILN_ERROR_STORE: store_mode is KILN_STORE_READ_WRITE, store_dir is not NULL
 * or "", and the store folder under it cannot be made or trusted (not a folder,
 * not this user's, or writable by others); the message names store_dir. (Any
 * other store that cannot be used is no error: kiln_device_info.has_store is
 * then false.) KILN_ERROR_INTERNAL: a host without a JIT. */
kiln_status kiln_device_create(const kiln_device_config *config,
                               kiln_device *out_device);

/** Destroys the device: *drains* its streams (waits for the work already
 * queued to run): no queued work is lost. The handles still held on it
 * (kernels, streams, events) stay valid handles, safe to use, and must
 * still be destroyed: a submission to one of its streams (launch, copy,
 * record, wait) fails with KILN_ERROR_CANCELLED ("the device was
 * destroyed"), and so does a launch that needs a kernel variant not
 * compiled yet (which also fails that stream); kiln_stream_status and
 * kiln_stream_synchronize report what the stream's work did; events are
 * complete; a kernel still answers kiln_kernel_get_info and
 * kiln_kernel_get_parameter. May block while work drains.
 * KILN_ERROR_INVALID_ARGUMENT: device NULL, destroyed or not a device; or
 * called from one of the device's own callbacks (its warning or
 * debug-print callback), which the drain would wait for: the device is
 * left as it is. */
kiln_status kiln_device_destroy(kiln_device device);

/** The device's concurrency, whether a store is in use (see
 * kiln_device_info.has_store), how many kernels it holds and how many
 * warnings it met, into *out_info.
 * KILN_ERROR_INVALID_ARGUMENT: device NULL/destroyed, out_info NULL. */
kiln_status kiln_device_get_info(kiln_device device,
                                 kiln_device_info *out_info);

/** The variants the device compiled, loaded from its store and linked from
 * launches so far, into *out_counters.
 * KILN_ERROR_INVALID_ARGUMENT: device NULL/destroyed, out_counters NULL. */
kiln_status kiln_device_get_counters(kiln_device device,
                                     kiln_device_counters *out_counters);

/** Waits for the work of every stream of the device. Returns the first
 * failure among them (with its message), KILN_OK if none; the streams stay
 * failed (see kiln_stream_reset_error).
 * KILN_ERROR_INVALID_ARGUMENT: device NULL or destroyed; or called from the
 * debug-print callback of a launch on one of its streams (it would wait
 * for the callback). */
kiln_status kiln_device_synchronize(kiln_device device);

/** Receives the text of one launch's debug_print (docs/LangRef.md §14):
 * \p size bytes at \p text (also NUL-terminated), valid during the call;
 * \p user_data as given to kiln_device_set_debug_print_callback. */
typedef void (*kiln_debug_print_callback)(const char *text, size_t size,
                                          void *user_data);

/** Where the text of debug_print goes: each launch of a kernel that prints
 * calls \p callback once with its whole text, when its cubes are done and
 * before the launch's status is returned (on the thread that ran the
 * launch), with no Kiln lock held. NULL restores the default: the
 * process's standard output, flushed. Launches already running keep the
 * callback they started with. What the callback may not call (its own
 * stream's kiln_stream_synchronize, ...): docs/C-API.md, "Callbacks".
 * KILN_ERROR_INVALID_ARGUMENT: device NULL or destroyed. */
kiln_status kiln_device_set_debug_print_callback(
    kiln_device device, kiln_debug_print_callback callback, void *user_data);

/** The most bytes of debug text one launch keeps (default 1 MiB = 1048576):
 * what its units print beyond is dropped, and the launch's text ends with
 * "... N bytes of debug output dropped\n".
 * KILN_ERROR_INVALID_ARGUMENT: device NULL or destroyed. */
kiln_status kiln_device_set_debug_print_limit(kiln_device device,
                                              uint64_t bytes);

/** Runs a launch and returns when every cube is done (no stream): \p kernel
 * on \p cube_count cubes with \p arg_count arguments at \p args (NULL when
 * arg_count is 0), one per kernel parameter in order. The arguments are
 * copied: \p args may be reused as soon as the call returns.
 * KILN_ERROR_INVALID_ARGUMENT: device or kernel NULL/destroyed, args NULL
 * with a non-zero arg_count, an arg_count above the kernel's parameter
 * count (up to SIZE_MAX: refused before args is read), a malformed kiln_arg
 * (no kind, NULL or destroyed buffer, element type out of range, value size
 * above KILN_MAX_VALUE_BYTES, a tensor count above KILN_MAX_TENSOR_RANK),
 * a kernel of another device.
 * KILN_ERROR_INVALID_LAUNCH: the arguments do not fit the kernel (count,
 * kinds, types, access, bounds, alignment; the message names the parameter)
 * or the cube count does not (see kiln_dim3). KILN_ERROR_OUT_OF_MEMORY: no
 * scratch memory. KILN_ERROR_INTERNAL: the kernel variant the bindings need
 * (docs/API.md, "Variants") could not be compiled or linked.
 * KILN_ERROR_CANCELLED: the device was destroyed.
 * The cubes run on the device's threads, or on the calling thread for a
 * single cube or a launch worth less than twice min_work_per_thread_us
 * (kiln_device_config). */
kiln_status kiln_device_launch(kiln_device device, kiln_kernel kernel,
                               kiln_dim3 cube_count, const kiln_arg *args,
                               size_t arg_count);

/** kiln_device_launch with the cube count read from *cube_counts now (see
 * kiln_stream_launch_indirect). */
kiln_status kiln_device_launch_indirect(kiln_device device, kiln_kernel kernel,
                                        const kiln_buffer_view *cube_counts,
                                        const kiln_arg *args,
                                        size_t arg_count);

/*===-- Kernels -----------------------------------------------------------===*/

/** Whether a kernel's code checks buffer bounds. The zero value is the
 * default, which is checked. */
typedef enum kiln_bounds_check {
  /** The default: checked. */
  KILN_BOUNDS_CHECK_DEFAULT = 0,
  /** An out-of-bounds load reads 0, an out-of-bounds store is dropped. */
  KILN_BOUNDS_CHECK_ON = 1,
  /** No checks: an out-of-bounds access is the kernel's bug. */
  KILN_BOUNDS_CHECK_OFF = 2
} kiln_bounds_check;

/** How a kernel is loaded. A zeroed struct (or kiln_kernel_options_init, or
 * passing NULL) gives the defaults. Strings are copied by the call. */
typedef struct kiln_kernel_options {
  /** The runtime's own id for the kernel: it must change whenever the kernel
   * does (the store still checks a hash of the IR). NULL or "": an id
   * derived from the kernel's canonical text. */
  const char *id;
  /** The file named in diagnostics; NULL or "": "<input>". */
  const char *file_name;
  kiln_bounds_check bounds_check;
} kiln_kernel_options;

/** Where a kernel's code first came from. */
typedef enum kiln_kernel_origin {
  /** The device's compiler already had the code (for example, another
   * thread's load of the same kernel, at the same moment, served it). A
   * kernel loaded again gets the first load's origin. */
  KILN_ORIGIN_MEMORY = 0,
  /** Loaded from the persistent store. */
  KILN_ORIGIN_STORE = 1,
  /** Compiled. */
  KILN_ORIGIN_COMPILED = 2
} kiln_kernel_origin;

/** What kiln_kernel_get_info reports. The strings belong to the kernel
 * handle: valid until it is destroyed or unloaded. */
typedef struct kiln_kernel_info {
  /** The kernel's name, without '@'. */
  const char *name;
  /** The id it is kept under (kiln_kernel_options.id or the derived one). */
  const char *id;
  kiln_dim3 cube_dim;
  uint32_t plane_dim;
  size_t parameter_count;
  kiln_kernel_origin origin;
  bool bounds_checked;
} kiln_kernel_info;

/** One parameter of a kernel (kiln_kernel_get_parameter). name belongs to
 * the kernel handle: valid until it is destroyed or unloaded. */
typedef struct kiln_parameter_info {
  /** Without '%'. */
  const char *name;
  bool is_buffer;
  /** A buffer's element type, or the value's type. */
  kiln_element_type type;
  /** Buffers only: what the kernel may do with it. */
  kiln_access access;
  /** A tensor_map parameter (docs/LangRef.md §17): bind it with
   * kiln_arg_tensor_map. (Added after the other members.) */
  bool is_tensor_map;
  /** A tensor_map parameter declared im2col (docs/LangRef.md §17.7): bind
   * it with kiln_arg_tensor_map_im2col. (Added after the other members.) */
  bool is_im2col;
} kiln_parameter_info;

/** Fills *options with the defaults (all zero).
 * KILN_ERROR_INVALID_ARGUMENT: options NULL. */
kiln_status kiln_kernel_options_init(kiln_kernel_options *options);

/** Loads the kernel named \p name ("vadd" or "@vadd"; NULL or "": the
 * text's only kernel) of the NUL-terminated `.kiln` text \p text on \p device:
 * from the device's memory, its store, or compiled. \p options may be NULL (the
 * defaults). The new handle goes to *out_kernel, owned by the caller: release
 * it with kiln_kernel_destroy or kiln_device_unload_kernel. The text is not
 * kept.
 * KILN_ERROR_INVALID_ARGUMENT: device NULL/destroyed, text or out_kernel
 * NULL, options->bounds_check out of range, no name given for a text that
 * does not hold exactly one kernel. KILN_ERROR_INVALID_KERNEL: the text does
 * not parse or the kernel does not verify; kiln_last_error() holds every
 * located diagnostic ("FILE:LINE:COL: error: ...", FILE being
 * options->file_name or "<input>"). KILN_ERROR_NOT_FOUND: no kernel of that
 * name in the text.
 * KILN_ERROR_INTERNAL: the compiler or the linker failed. (A store that
 * cannot be read or written is no error: the kernel is compiled.)
 * KILN_ERROR_CANCELLED: the device was destroyed.
 * The same kernel loaded again without an id (or under the same id) gives a
 * new handle on the same kernel: kiln_kernel_get_info reports the first
 * load's origin, and kiln_device_unload_kernel of either handle makes the
 * device forget the kernel for both. */
kiln_status kiln_device_load_kernel(kiln_device device, const char *text,
                                    const char *name,
                                    const kiln_kernel_options *options,
                                    kiln_kernel *out_kernel);

/** The kernel \p device loaded under the id \p id (kiln_kernel_options.id
 * or kiln_kernel_info.id) with that bounds checking, without the IR: no
 * parsing, printing or hashing. A new handle into *out_kernel, owned by the
 * caller.
 * KILN_ERROR_INVALID_ARGUMENT: device NULL/destroyed, id or out_kernel
 * NULL, bounds_check out of range. KILN_ERROR_NOT_FOUND: not loaded (or
 * unloaded). */
kiln_status kiln_device_find_kernel(kiln_device device, const char *id,
                                    kiln_bounds_check bounds_check,
                                    kiln_kernel *out_kernel);

/** Makes \p device forget \p kernel (kiln_device_find_kernel and
 * kiln_device_load_kernel no longer serve it from memory, whichever handle
 * on that kernel is given) and destroys the handle \p kernel. Other handles
 * on the kernel stay valid and launchable. Its code is freed once no other
 * handle and no queued launch holds it. On an error the handle is left as
 * it was.
 * KILN_ERROR_INVALID_ARGUMENT: device or kernel NULL/destroyed, or the C++
 * API's refusal (a kernel of another device). */
kiln_status kiln_device_unload_kernel(kiln_device device, kiln_kernel kernel);

/** Releases the handle. The device still holds the kernel (see
 * kiln_device_unload_kernel); launches already queued still run.
 * KILN_ERROR_INVALID_ARGUMENT: kernel NULL, destroyed or not a kernel. */
kiln_status kiln_kernel_destroy(kiln_kernel kernel);

/** The kernel's name, id, shape, parameter count, origin and bounds
 * checking into *out_info.
 * KILN_ERROR_INVALID_ARGUMENT: kernel NULL/destroyed, out_info NULL. */
kiln_status kiln_kernel_get_info(kiln_kernel kernel,
                                 kiln_kernel_info *out_info);

/** Parameter number \p index (from 0) of the kernel into *out_info.
 * KILN_ERROR_INVALID_ARGUMENT: kernel NULL/destroyed, out_info NULL, index
 * not below the parameter count. */
kiln_status kiln_kernel_get_parameter(kiln_kernel kernel, size_t index,
                                      kiln_parameter_info *out_info);

/** Which variants kiln_kernel_prepare makes ready: a bitwise or. A launch
 * picks its kernel's variant by what its bindings give (every view 64-byte
 * aligned or not, a written view overlapping another or not); loading a
 * kernel links the aligned, non-overlapping one, and another is compiled by
 * the first launch that needs it, unless it was prepared. */
typedef enum kiln_prepare_flags {
  /** The variants for views not 64-byte aligned. */
  KILN_PREPARE_UNALIGNED = 1,
  /** The variants for overlapping or in-place bindings. */
  KILN_PREPARE_MAY_ALIAS = 2,
  /** Every variant a launch can pick. */
  KILN_PREPARE_ALL = 3
} kiln_prepare_flags;

/** Makes the variants \p variants names (kiln_prepare_flags, or'ed; 0
 * prepares nothing) ready ahead of time, so that no launch of the kernel
 * ever compiles: those not linked yet are served as one batch, compiled in
 * parallel (kiln_device_config.batch_threads) or loaded from the store, and
 * kept in the store like any other. Variants already linked cost nothing;
 * every handle on the kernel shares them. May take as long as compiling.
 * KILN_ERROR_INVALID_ARGUMENT: kernel NULL/destroyed, a bit of \p variants
 * that is no kiln_prepare_flags. KILN_ERROR_CANCELLED: the device was
 * destroyed. A variant that does not compile gives its error
 * (KILN_ERROR_INTERNAL, or what the compiler said); the others are kept. */
kiln_status kiln_kernel_prepare(kiln_kernel kernel, uint32_t variants);

/*===-- Buffers -----------------------------------------------------------===*/

/** \p size bytes of zeroed memory, 64-byte aligned, into *out_buffer, owned
 * by the caller (kiln_buffer_destroy). Zero bytes gives a valid, empty
 * buffer.
 * KILN_ERROR_INVALID_ARGUMENT: out_buffer NULL. KILN_ERROR_OUT_OF_MEMORY:
 * the memory cannot be had (or exceeds the host's physical memory). */
kiln_status kiln_buffer_allocate(uint64_t size, kiln_buffer *out_buffer);

/** The caller's memory: \p size bytes at \p data, not owned, not copied, as
 * a buffer into *out_buffer (kiln_buffer_destroy releases the handle, never
 * the memory). The memory must stay valid until every piece of work that
 * uses it has run (synchronize the streams before freeing it).
 * KILN_ERROR_INVALID_ARGUMENT: out_buffer NULL, data NULL with a non-zero
 * size. */
kiln_status kiln_buffer_wrap(void *data, uint64_t size,
                             kiln_buffer *out_buffer);

/** The buffer's first byte into *out_data (may be NULL for an empty
 * buffer). Reading or writing it while queued work uses the buffer is a
 * race: synchronize first.
 * KILN_ERROR_INVALID_ARGUMENT: buffer NULL/destroyed, out_data NULL. */
kiln_status kiln_buffer_data(kiln_buffer buffer, void **out_data);

/** The buffer's size in bytes into *out_size.
 * KILN_ERROR_INVALID_ARGUMENT: buffer NULL/destroyed, out_size NULL. */
kiln_status kiln_buffer_size(kiln_buffer buffer, uint64_t *out_size);

/** Releases the handle. Memory Kiln allocated is freed once no queued work
 * uses it any more (destroying a buffer that a queued launch binds is
 * safe).
 * KILN_ERROR_INVALID_ARGUMENT: buffer NULL, destroyed or not a buffer. */
kiln_status kiln_buffer_destroy(kiln_buffer buffer);

/*===-- Streams -----------------------------------------------------------===*/

/*
 * A stream runs its work one item at a time, in submission order; work of
 * different streams runs at once. A failure of its *work* makes the stream
 * *failed*: a launch refused when it is submitted (one that does not fit
 * the kernel, KILN_ERROR_INVALID_LAUNCH; a kernel of another device,
 * KILN_ERROR_INVALID_ARGUMENT; a variant that cannot be compiled), a launch
 * that fails when it runs (a scratch area that cannot be had), a wait on an
 * event whose stream had failed (KILN_ERROR_CANCELLED). Every item queued
 * after the failure is then skipped, and every later submission returns the
 * stream's failure (its code and message) without queuing anything, until
 * kiln_stream_reset_error. Other streams and the device are unaffected.
 * A misuse found by the C layer (a NULL or destroyed handle, a malformed
 * kiln_arg) and a copy whose range does not fit its buffer or whose host
 * pointer is NULL are refused with KILN_ERROR_INVALID_ARGUMENT: they queue
 * nothing and leave the stream as it was.
 */

/** A new stream on \p device into *out_stream, owned by the caller
 * (kiln_stream_destroy).
 * KILN_ERROR_INVALID_ARGUMENT: device NULL/destroyed, out_stream NULL.
 * KILN_ERROR_CANCELLED: the device was destroyed. */
kiln_status kiln_stream_create(kiln_device device, kiln_stream *out_stream);

/** Releases the handle without waiting: the work already queued still runs
 * (call kiln_stream_synchronize first to wait for it).
 * KILN_ERROR_INVALID_ARGUMENT: stream NULL, destroyed or not a stream. */
kiln_status kiln_stream_destroy(kiln_stream stream);

/** Queues a launch of \p kernel on \p cube_count cubes with \p arg_count
 * arguments at \p args (NULL when arg_count is 0) and returns at once. The
 * launch is checked here (and the kernel variant for the bindings'
 * alignment and overlap chosen, compiled if new); \p args may be reused as
 * soon as the call returns. Buffers bound stay alive until the launch has
 * run.
 * Returns the errors of kiln_device_launch. Every error of the launch
 * itself also fails the stream, since the work after it was meant to follow
 * it: KILN_ERROR_INVALID_LAUNCH, a kernel of another device
 * (KILN_ERROR_INVALID_ARGUMENT, "Stream::launch: kernel 'NAME' belongs to
 * another device"), a variant that cannot be compiled, and
 * KILN_ERROR_CANCELLED for a variant not compiled before the device was
 * destroyed. A misuse found by the C layer (a NULL or destroyed handle, a
 * malformed kiln_arg, an arg_count above the kernel's parameters) does not, nor
 * does the KILN_ERROR_CANCELLED of any other launch after the device was
 * destroyed. On a failed stream nothing is queued and the stream's failure is
 * returned. */
kiln_status kiln_stream_launch(kiln_stream stream, kiln_kernel kernel,
                               kiln_dim3 cube_count, const kiln_arg *args,
                               size_t arg_count);

/** An indirect launch (as vkCmdDispatchIndirect): like kiln_stream_launch,
 * but the cube count is the three uint32_t (x, y, z) at the start of
 * *cube_counts, a view of at least 3 KILN_U32 elements, read when the launch
 * runs, after the work queued before it on this stream. The view is checked
 * here (KILN_ERROR_INVALID_ARGUMENT, "... the cube count view must hold at
 * least 3 u32 ..."); the count when the launch runs: a zero runs nothing,
 * more than 2^32-1 cubes or units past u32 positions fail the stream with
 * KILN_ERROR_INVALID_LAUNCH. */
kiln_status kiln_stream_launch_indirect(kiln_stream stream, kiln_kernel kernel,
                                        const kiln_buffer_view *cube_counts,
                                        const kiln_arg *args,
                                        size_t arg_count);

/** Queues a copy of \p size bytes from host memory \p src into \p dst at
 * \p dst_offset. \p src must stay valid and unchanged until the copy has
 * run (synchronize, or wait on an event recorded after it).
 * KILN_ERROR_INVALID_ARGUMENT: stream or dst NULL/destroyed, src NULL with
 * a non-zero size, a range outside the buffer. On a failed stream: its
 * failure. */
kiln_status kiln_stream_copy_to_buffer(kiln_stream stream, kiln_buffer dst,
                                       uint64_t dst_offset, const void *src,
                                       uint64_t size);

/** Queues a copy of \p size bytes of \p src at \p src_offset into host
 * memory \p dst, which must stay valid until the copy has run.
 * KILN_ERROR_INVALID_ARGUMENT: stream or src NULL/destroyed, dst NULL with
 * a non-zero size, a range outside the buffer. On a failed stream: its
 * failure. */
kiln_status kiln_stream_copy_from_buffer(kiln_stream stream, void *dst,
                                         kiln_buffer src, uint64_t src_offset,
                                         uint64_t size);

/** Queues a copy of \p size bytes from \p src at \p src_offset into \p dst
 * at \p dst_offset (the ranges may overlap: memmove).
 * KILN_ERROR_INVALID_ARGUMENT: stream, dst or src NULL/destroyed, a range
 * outside a buffer. On a failed stream: its failure. */
kiln_status kiln_stream_copy_buffer(kiln_stream stream, kiln_buffer dst,
                                    uint64_t dst_offset, kiln_buffer src,
                                    uint64_t src_offset, uint64_t size);

/** A new event into *out_event, complete once everything queued on the
 * stream so far has run (or been skipped). Owned by the caller
 * (kiln_event_destroy). On a failed stream the event is made complete at
 * once, with the stream's failure as its status (and KILN_OK is returned).
 * KILN_ERROR_INVALID_ARGUMENT: stream NULL/destroyed, out_event NULL.
 * KILN_ERROR_CANCELLED: the device was destroyed. */
kiln_status kiln_stream_record_event(kiln_stream stream, kiln_event *out_event);

/** Later work on \p stream waits until \p event (recorded on any stream) is
 * complete. When the event completes with a failure (its stream had
 * failed), \p stream fails with KILN_ERROR_CANCELLED, with a message that
 * quotes that failure.
 * KILN_ERROR_INVALID_ARGUMENT: stream or event NULL/destroyed. On a failed
 * stream: its failure. */
kiln_status kiln_stream_wait_event(kiln_stream stream, kiln_event event);

/** Waits until everything queued on the stream so far has run. Returns the
 * stream's status: KILN_OK, or its failure (the message in
 * kiln_last_error()); the stream stays failed.
 * KILN_ERROR_INVALID_ARGUMENT: stream NULL or destroyed; or called from the
 * debug-print callback of a launch on this stream (it would wait for the
 * callback). */
kiln_status kiln_stream_synchronize(kiln_stream stream);

/** The stream's status, never blocking: KILN_OK, or the failure that
 * stopped it (its message in kiln_last_error()).
 * KILN_ERROR_INVALID_ARGUMENT: stream NULL or destroyed (a message that
 * starts with "kiln_stream_status:", which a stream failure never does). */
kiln_status kiln_stream_status(kiln_stream stream);

/** Waits for the queued work, then clears the stream's failure so that new
 * work runs again. The code of the failure it cleared (KILN_OK if none)
 * goes to *out_cleared when out_cleared is not NULL (read the message first
 * with kiln_stream_status). Returns KILN_OK when the stream was reset.
 * KILN_ERROR_INVALID_ARGUMENT: stream NULL or destroyed; or called from the
 * debug-print callback of a launch on this stream (nothing is cleared). */
kiln_status kiln_stream_reset_error(kiln_stream stream,
                                    kiln_status *out_cleared);

/** Abandons the stream's work and returns at once, never blocking: the
 * launch running now stops at its next poll (its loops poll at every
 * iteration, its cubes as they end: docs/C-API.md, "Stopping a launch"),
 * and every item not yet run is skipped. The stream fails with
 * KILN_ERROR_CANCELLED ("the stream was cancelled"; an earlier failure is
 * kept), its events complete with that failure, and it stays failed until
 * kiln_stream_reset_error. The buffers the stopped launch may write hold
 * unspecified contents. Other streams and the device are unaffected and
 * get the threads back once the launch has stopped
 * (kiln_stream_synchronize waits for that). This is the way to abandon a
 * kernel that never ends: kiln_device_destroy would wait for it.
 * KILN_ERROR_INVALID_ARGUMENT: stream NULL or destroyed. */
kiln_status kiln_stream_cancel(kiln_stream stream);

/** Each launch queued on \p stream after this call may run for at most
 * \p milliseconds from when it starts running (0, the default: no
 * limit). One that runs longer is stopped as kiln_stream_cancel stops it
 * and fails the stream with KILN_ERROR_CANCELLED, a message that names
 * the limit ("... was stopped at the stream's launch timeout of 100 ms
 * ..."); the work queued after it is skipped until
 * kiln_stream_reset_error.
 * KILN_ERROR_INVALID_ARGUMENT: stream NULL or destroyed, milliseconds
 * above 2^40. */
kiln_status kiln_stream_set_launch_timeout(kiln_stream stream,
                                           uint64_t milliseconds);

/*===-- Collectives -------------------------------------------------------===*/

/** How kiln_all_reduce combines its members' elements. */
typedef enum kiln_reduce_op {
  KILN_REDUCE_SUM = 0,
  KILN_REDUCE_MAX = 1,
  KILN_REDUCE_MIN = 2
} kiln_reduce_op;

/** One device's part in a collective: a stream of that device (which orders
 * the collective with the device's other work) and the view it gives and
 * gets back (its access must be KILN_ACCESS_READ_WRITE). */
typedef struct kiln_collective_member {
  kiln_stream stream;
  kiln_buffer_view view;
} kiln_collective_member;

/** All-reduce across the devices of the process: every member's view gets,
 * element by element, the sum, max or min over all members' views as they
 * hold after the work queued before on each member's stream; work queued
 * after it on each stream sees the result. Returns at once; the reduction
 * runs on the first member's stream once every member's stream has reached
 * it, and the other streams wait for it (docs/C-API.md, "Collectives":
 * element types, the order of sums, NaN). One member changes nothing.
 * KILN_ERROR_INVALID_ARGUMENT, nothing queued: members NULL with a non-zero
 * count, no member, an op out of range, a NULL/destroyed stream or buffer,
 * a view that is not KILN_ACCESS_READ_WRITE, two streams of one device,
 * views of different element types or counts, overlapping views, a view out
 * of its buffer or misaligned, an element type that cannot be reduced (bool,
 * minifloats). On a failed member stream: its failure, nothing queued. */
kiln_status kiln_all_reduce(const kiln_collective_member *members,
                            size_t member_count, kiln_reduce_op op);

/*===-- Events ------------------------------------------------------------===*/

/** Releases the handle. Streams waiting on the event still wait for it.
 * KILN_ERROR_INVALID_ARGUMENT: event NULL, destroyed or not an event. */
kiln_status kiln_event_destroy(kiln_event event);

/** Waits until the event is complete. Returns the status of the work before
 * it: KILN_OK, or the first failure of its stream (that code, and its
 * message in kiln_last_error()).
 * KILN_ERROR_INVALID_ARGUMENT: event NULL or destroyed. */
kiln_status kiln_event_synchronize(kiln_event event);

/** Whether the event is complete, into *out_complete; never blocks.
 * KILN_ERROR_INVALID_ARGUMENT: event NULL/destroyed, out_complete NULL. */
kiln_status kiln_event_query(kiln_event event, bool *out_complete);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_C_KILN_H */
