/*===- consumer.c - A vadd through the installed C API --------------------===*\
|*                                                                            *|
|* Built by the install test with `cc $(pkg-config --cflags --libs kiln)`     *|
|* against an installed Kiln: c[i] = a[i] + b[i] for 1000 floats on a stream, *|
|* every element checked. Exit code 0 only when all of them are right.       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <kiln-c/kiln.h>

#include <stdio.h>

static const char VAddText[] =
    "kernel @vadd cube_dim(256) (%a: buffer<f32, read>,\n"
    "                            %b: buffer<f32, read>,\n"
    "                            %c: buffer<f32, write>, %n: u32) {\n"
    "  %i = absolute_pos : u32\n"
    "  %in = lt %i, %n : bool\n"
    "  if %in {\n"
    "    %x = load %a[%i] : f32\n"
    "    %y = load %b[%i] : f32\n"
    "    %s = add %x, %y : f32\n"
    "    store %c[%i], %s\n"
    "  }\n"
    "}\n";

/* Says which call failed and why; returns 1, the exit code. */
static int fail(const char *what, kiln_status status) {
  fprintf(stderr, "c-consumer: %s: %s: %s\n", what, kiln_status_name(status),
          kiln_last_error());
  return 1;
}

#define CHECK(call)                                                            \
  do {                                                                         \
    kiln_status status_ = (call);                                              \
    if (status_ != KILN_OK)                                                    \
      return fail(#call, status_);                                             \
  } while (0)

enum { N = 1000 };

static int run(kiln_device device) {
  kiln_kernel vadd = NULL;
  kiln_buffer a = NULL, b = NULL, c = NULL;
  kiln_stream stream = NULL;
  void *a_data = NULL, *b_data = NULL, *c_data = NULL;
  const kiln_element_type f32 = kiln_scalar(KILN_F32);
  float *af, *bf;
  const float *cf;
  unsigned bad = 0, i;

  CHECK(kiln_device_load_kernel(device, VAddText, "vadd", NULL, &vadd));
  CHECK(kiln_buffer_allocate(N * sizeof(float), &a));
  CHECK(kiln_buffer_allocate(N * sizeof(float), &b));
  CHECK(kiln_buffer_allocate(N * sizeof(float), &c));
  CHECK(kiln_buffer_data(a, &a_data));
  CHECK(kiln_buffer_data(b, &b_data));
  CHECK(kiln_buffer_data(c, &c_data));
  af = (float *)a_data;
  bf = (float *)b_data;
  for (i = 0; i < N; ++i) {
    af[i] = (float)i;
    bf[i] = 0.5f * (float)i + 1.0f;
  }

  CHECK(kiln_stream_create(device, &stream));
  {
    kiln_arg args[4];
    kiln_dim3 cubes;
    args[0] = kiln_arg_buffer(a, f32, KILN_ACCESS_READ);
    args[1] = kiln_arg_buffer(b, f32, KILN_ACCESS_READ);
    args[2] = kiln_arg_buffer(c, f32, KILN_ACCESS_WRITE);
    args[3] = kiln_arg_u32(N);
    cubes.x = (N + 255) / 256;
    cubes.y = 1;
    cubes.z = 1;
    CHECK(kiln_stream_launch(stream, vadd, cubes, args, 4));
  }
  CHECK(kiln_stream_synchronize(stream));

  cf = (const float *)c_data;
  for (i = 0; i < N; ++i) {
    float want = af[i] + bf[i];
    if (cf[i] != want && ++bad <= 5)
      fprintf(stderr, "c-consumer: c[%u] = %g, expected %g\n", i, (double)cf[i],
              (double)want);
  }

  CHECK(kiln_stream_destroy(stream));
  CHECK(kiln_buffer_destroy(c));
  CHECK(kiln_buffer_destroy(b));
  CHECK(kiln_buffer_destroy(a));
  CHECK(kiln_kernel_destroy(vadd));
  if (bad) {
    fprintf(stderr, "c-consumer: %u of %u elements wrong\n", bad, (unsigned)N);
    return 1;
  }
  printf("c-consumer: vadd of %u floats through kiln-c: ok\n", (unsigned)N);
  return 0;
}

int main(void) {
  kiln_device device = NULL;
  int rc;
  CHECK(kiln_device_create(NULL, &device));
  rc = run(device);
  CHECK(kiln_device_destroy(device));
  return rc;
}
