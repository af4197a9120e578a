/*===- kiln-c-example.c - Kiln from C: saxpy, then a reduction ------------===*\
|*                                                                            *|
|* kiln-c-example [N]                                                         *|
|*                                                                            *|
|* A C99 program on the C API (kiln-c/kiln.h), as a runtime written in C     *|
|* would use it. Two streams:                                                 *|
|*   upload    copies x and y into Kiln buffers and runs y = alpha * x + y    *|
|*             (@saxpy), then records an event;                               *|
|*   reduce    waits for that event, sums y per cube (@reduce_sum: a tree in  *|
|*             shared memory) and copies the partial sums back.               *|
|* The host adds the partial sums and checks them, and every y, against a     *|
|* reference computed here. Exit code 0 only when everything matches; any    *|
|* failing call prints its status and kiln_last_error().                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <kiln-c/kiln.h>

#include <stdio.h>
#include <stdlib.h>

static const char Kernels[] =
    "// y[i] = alpha * x[i] + y[i]\n"
    "kernel @saxpy cube_dim(256) (%x: buffer<f32, read>,\n"
    "                             %y: buffer<f32, read_write>,\n"
    "                             %alpha: f32, %n: u32) {\n"
    "  %i = absolute_pos : u32\n"
    "  %in = lt %i, %n : bool\n"
    "  if %in {\n"
    "    %xv = load %x[%i] : f32\n"
    "    %yv = load %y[%i] : f32\n"
    "    %r = fma %alpha, %xv, %yv : f32\n"
    "    store %y[%i], %r\n"
    "  }\n"
    "}\n"
    "\n"
    "// partial[cube] = the sum of the cube's 256 inputs\n"
    "kernel @reduce_sum cube_dim(256) (%in: buffer<f32, read>,\n"
    "                                  %partial: buffer<f32, write>,\n"
    "                                  %n: u32) {\n"
    "  %tile = shared f32[256]\n"
    "  %u = unit_pos : u32\n"
    "  %i = absolute_pos : u32\n"
    "  %in_range = lt %i, %n : bool\n"
    "  %x = var f32\n"
    "  set %x, 0.0:f32\n"
    "  if %in_range {\n"
    "    %v = load %in[%i] : f32\n"
    "    set %x, %v\n"
    "  }\n"
    "  %xv = get %x : f32\n"
    "  store %tile[%u], %xv\n"
    "  sync_cube\n"
    "  for %k = 0:u32 to 8:u32 {\n"
    "    %s = shr 128:u32, %k : u32\n"
    "    %active = lt %u, %s : bool\n"
    "    if %active {\n"
    "      %j = add %u, %s : u32\n"
    "      %a = load %tile[%u] : f32\n"
    "      %b = load %tile[%j] : f32\n"
    "      %sum = add %a, %b : f32\n"
    "      store %tile[%u], %sum\n"
    "    }\n"
    "    sync_cube\n"
    "  }\n"
    "  %first = eq %u, 0:u32 : bool\n"
    "  if %first {\n"
    "    %total = load %tile[0] : f32\n"
    "    %c = cube_pos : u32\n"
    "    store %partial[%c], %total\n"
    "  }\n"
    "}\n";

/* Prints which call failed and why; returns 1 (the exit code). */
static int failed(const char *call, kiln_status status) {
  fprintf(stderr, "kiln-c-example: %s: %s\n%s\n", call,
          kiln_status_name(status), kiln_last_error());
  return 1;
}

#define CHECK(call)                                                            \
  do {                                                                         \
    kiln_status status_ = (call);                                              \
    if (status_ != KILN_OK) {                                                  \
      rc = failed(#call, status_);                                             \
      goto done;                                                               \
    }                                                                          \
  } while (0)

static kiln_dim3 cubes_for(uint32_t n, uint32_t cube_dim) {
  kiln_dim3 d;
  d.x = (n + cube_dim - 1) / cube_dim;
  d.y = 1;
  d.z = 1;
  return d;
}

/* Everything on one device; 0 when every result is right. */
static int run(kiln_device device, uint32_t n) {
  const kiln_element_type f32 = kiln_scalar(KILN_F32);
  const float alpha = 2.0f;
  const kiln_dim3 cubes = cubes_for(n, 256);
  kiln_kernel saxpy = NULL, reduce = NULL;
  kiln_buffer x = NULL, y = NULL, partial = NULL;
  kiln_stream upload = NULL, reducer = NULL;
  kiln_event y_ready = NULL;
  kiln_kernel_options options;
  float *host_x = NULL, *host_y = NULL, *host_y_out = NULL,
        *host_partial = NULL;
  double total = 0.0, want_total = 0.0;
  uint32_t i, wrong = 0;
  int rc = 0;

  host_x = malloc(n * sizeof(float));
  host_y = malloc(n * sizeof(float));
  host_y_out = malloc(n * sizeof(float));
  host_partial = malloc(cubes.x * sizeof(float));
  if (!host_x || !host_y || !host_y_out || !host_partial) {
    fprintf(stderr, "kiln-c-example: out of memory\n");
    rc = 1;
    goto done;
  }
  /* Small integers: every sum below is exact in float. */
  for (i = 0; i < n; ++i) {
    host_x[i] = 0.5f * (float)(i % 100);
    host_y[i] = 1.0f;
  }

  CHECK(kiln_kernel_options_init(&options));
  options.file_name = "kiln-c-example.kiln";
  CHECK(kiln_device_load_kernel(device, Kernels, "saxpy", &options, &saxpy));
  CHECK(kiln_device_load_kernel(device, Kernels, "reduce_sum", &options,
                                &reduce));
  CHECK(kiln_buffer_allocate((uint64_t)n * sizeof(float), &x));
  CHECK(kiln_buffer_allocate((uint64_t)n * sizeof(float), &y));
  CHECK(kiln_buffer_allocate((uint64_t)cubes.x * sizeof(float), &partial));
  CHECK(kiln_stream_create(device, &upload));
  CHECK(kiln_stream_create(device, &reducer));

  /* upload: x, y in; y = alpha * x + y; an event once y is ready. */
  CHECK(kiln_stream_copy_to_buffer(upload, x, 0, host_x, n * sizeof(float)));
  CHECK(kiln_stream_copy_to_buffer(upload, y, 0, host_y, n * sizeof(float)));
  {
    kiln_arg args[4];
    args[0] = kiln_arg_buffer(x, f32, KILN_ACCESS_READ);
    args[1] = kiln_arg_buffer(y, f32, KILN_ACCESS_READ_WRITE);
    args[2] = kiln_arg_f32(alpha);
    args[3] = kiln_arg_u32(n);
    CHECK(kiln_stream_launch(upload, saxpy, cubes, args, 4));
  }
  CHECK(kiln_stream_record_event(upload, &y_ready));
  CHECK(kiln_stream_copy_from_buffer(upload, host_y_out, y, 0,
                                     n * sizeof(float)));

  /* reducer: after the event, one partial sum per cube, read back. */
  CHECK(kiln_stream_wait_event(reducer, y_ready));
  {
    kiln_arg args[3];
    args[0] = kiln_arg_buffer(y, f32, KILN_ACCESS_READ);
    args[1] = kiln_arg_buffer(partial, f32, KILN_ACCESS_WRITE);
    args[2] = kiln_arg_u32(n);
    CHECK(kiln_stream_launch(reducer, reduce, cubes, args, 3));
  }
  CHECK(kiln_stream_copy_from_buffer(reducer, host_partial, partial, 0,
                                     cubes.x * sizeof(float)));
  CHECK(kiln_stream_synchronize(reducer));
  CHECK(kiln_stream_synchronize(upload));

  /* Check against the reference. */
  for (i = 0; i < n; ++i) {
    float want = alpha * host_x[i] + host_y[i];
    want_total += want;
    if (host_y_out[i] != want && ++wrong <= 5)
      fprintf(stderr, "kiln-c-example: y[%u] = %g, expected %g\n", (unsigned)i,
              (double)host_y_out[i], (double)want);
  }
  for (i = 0; i < cubes.x; ++i)
    total += host_partial[i];
  if (wrong) {
    fprintf(stderr, "kiln-c-example: %u of %u elements of y wrong\n",
            (unsigned)wrong, (unsigned)n);
    rc = 1;
  }
  if (total != want_total) {
    fprintf(stderr, "kiln-c-example: sum(y) = %.1f, expected %.1f\n", total,
            want_total);
    rc = 1;
  }
  if (rc == 0)
    printf("kiln-c-example: saxpy of %u floats, then sum over %u cubes on a "
           "second stream: %.1f (ok)\n",
           (unsigned)n, (unsigned)cubes.x, total);

done:
  /* Destroying NULL handles would fail: only what was made is destroyed. */
  if (y_ready)
    kiln_event_destroy(y_ready);
  if (reducer)
    kiln_stream_destroy(reducer);
  if (upload)
    kiln_stream_destroy(upload);
  if (partial)
    kiln_buffer_destroy(partial);
  if (y)
    kiln_buffer_destroy(y);
  if (x)
    kiln_buffer_destroy(x);
  if (reduce)
    kiln_kernel_destroy(reduce);
  if (saxpy)
    kiln_kernel_destroy(saxpy);
  free(host_partial);
  free(host_y_out);
  free(host_y);
  free(host_x);
  return rc;
}

int main(int argc, char **argv) {
  kiln_device device = NULL;
  uint32_t n = 100000;
  kiln_status status;
  int rc;

  if (argc > 1) {
    long v = strtol(argv[1], NULL, 10);
    if (v <= 0 || v > 100000000) {
      fprintf(stderr, "usage: kiln-c-example [N], 0 < N <= 100000000\n");
      return 2;
    }
    n = (uint32_t)v;
  }
  /* The default configuration: every core, -O3, the store of KILN_CACHE. */
  status = kiln_device_create(NULL, &device);
  if (status != KILN_OK)
    return failed("kiln_device_create", status);
  rc = run(device, n);
  /* Destroying the device drains its streams first. */
  status = kiln_device_destroy(device);
  if (status != KILN_OK)
    return failed("kiln_device_destroy", status);
  return rc;
}
