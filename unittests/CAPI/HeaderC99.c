/*===- HeaderC99.c - kiln-c/kiln.h from a C99 translation unit ------------===*\
|*                                                                            *|
|* Compiled with -std=c99 -pedantic -Werror (unittests/CAPI/CMakeLists.txt):  *|
|* the header is C99, and a C caller can make every struct and launch with    *|
|* it. HandleTest.cpp runs kiln_capi_c99_smoke.                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "kiln-c/kiln.h"

#include <string.h>

int kiln_capi_c99_smoke(void);

static const char Scale[] =
    "kernel @scale cube_dim(4) (%x: buffer<f32, read_write>, %k: f32) {\n"
    "  %i = absolute_pos : u32\n"
    "  %n = len %x : u32\n"
    "  %in = lt %i, %n : bool\n"
    "  if %in {\n"
    "    %v = load %x[%i] : f32\n"
    "    %r = mul %v, %k : f32\n"
    "    store %x[%i], %r\n"
    "  }\n"
    "}\n";

/* Any int is a valid C enum value: out-of-range ones are refused (or named
 * unknown), never undefined behaviour inside Kiln. 0 on success, else the
 * line that failed. */
static int enums_from_c(void) {
  kiln_device_config config;
  kiln_device device = NULL;
  kiln_kernel kernel = NULL;
  kiln_buffer buffer = NULL;
  kiln_element_type type;
  kiln_arg args[2];
  kiln_dim3 cubes = {1, 1, 1};
  uint32_t bytes;

  if (strcmp(kiln_status_name((kiln_status)-1), "unknown status") != 0 ||
      strcmp(kiln_status_name((kiln_status)1000), "unknown status") != 0)
    return __LINE__;
  type.scalar = (kiln_scalar_type)-5;
  type.lanes = 0;
  if (kiln_element_type_size(type, &bytes) != KILN_ERROR_INVALID_ARGUMENT ||
      strcmp(kiln_last_error(), "kiln_element_type_size: type.scalar is -5, "
                                "not a kiln_scalar_type") != 0)
    return __LINE__;
  if (kiln_device_config_init(&config) != KILN_OK)
    return __LINE__;
  config.store_mode = (kiln_store_mode)-1;
  if (kiln_device_create(&config, &device) != KILN_ERROR_INVALID_ARGUMENT ||
      device != NULL)
    return __LINE__;
  config.store_mode = KILN_STORE_OFF;
  if (kiln_device_create(&config, &device) != KILN_OK)
    return __LINE__;
  if (kiln_device_find_kernel(device, "x", (kiln_bounds_check)9, &kernel) !=
          KILN_ERROR_INVALID_ARGUMENT ||
      strcmp(kiln_last_error(), "kiln_device_find_kernel: bounds_check is 9, "
                                "not a kiln_bounds_check") != 0)
    return __LINE__;
  if (kiln_all_reduce(NULL, 0, (kiln_reduce_op)9) !=
          KILN_ERROR_INVALID_ARGUMENT ||
      strcmp(kiln_last_error(),
             "kiln_all_reduce: op is 9, not a kiln_reduce_op") != 0)
    return __LINE__;
  /* A kind and an access no enumerator has, through the constructors. */
  if (kiln_device_load_kernel(device, Scale, NULL, NULL, &kernel) != KILN_OK ||
      kiln_buffer_allocate(16, &buffer) != KILN_OK)
    return __LINE__;
  args[0] = kiln_arg_view(buffer, kiln_line((kiln_scalar_type)77, 0), 0, 4,
                          (kiln_access)-3);
  if (args[0].view.type.scalar != (kiln_scalar_type)77 ||
      args[0].view.access != (kiln_access)-3)
    return __LINE__;
  args[0].view.type = kiln_scalar(KILN_F32);
  args[1] = kiln_arg_f32(1.0f);
  if (kiln_device_launch(device, kernel, cubes, args, 2) !=
          KILN_ERROR_INVALID_ARGUMENT ||
      strcmp(kiln_last_error(), "kiln_device_launch: args[0].view.access is "
                                "-3, not a kiln_access") != 0)
    return __LINE__;
  args[0].view.access = KILN_ACCESS_READ_WRITE;
  args[1].kind = (kiln_arg_kind)-123;
  if (kiln_device_launch(device, kernel, cubes, args, 2) !=
          KILN_ERROR_INVALID_ARGUMENT ||
      strcmp(kiln_last_error(),
             "kiln_device_launch: args[1].kind is -123, not "
             "KILN_ARG_BUFFER, KILN_ARG_VALUE, KILN_ARG_TENSOR, "
             "KILN_ARG_TENSOR_MAP or KILN_ARG_TENSOR_MAP_IM2COL (a zeroed "
             "kiln_arg, or a tensor made from something else?)") != 0)
    return __LINE__;
  if (kiln_buffer_destroy(buffer) != KILN_OK ||
      kiln_kernel_destroy(kernel) != KILN_OK)
    return __LINE__;
  if (kiln_device_destroy(device) != KILN_OK)
    return __LINE__;
  return 0;
}

/* 0 on success, else the line that failed. */
int kiln_capi_c99_smoke(void) {
  kiln_device_config config;
  kiln_kernel_options options;
  kiln_device device = NULL;
  kiln_kernel kernel = NULL;
  kiln_buffer buffer = NULL;
  kiln_arg args[2];
  kiln_dim3 cubes = {2, 1, 1};
  float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int i;

  if (kiln_device_config_init(&config) != KILN_OK)
    return __LINE__;
  if (config.keep_warm_us != 2000 || config.min_work_per_thread_us != 10)
    return __LINE__;
  config.store_mode = KILN_STORE_OFF;
  config.keep_warm_us = 0;           /* the workers sleep at once */
  config.min_work_per_thread_us = 0; /* every launch over every thread */
  if (kiln_device_create(&config, &device) != KILN_OK)
    return __LINE__;
  memset(&options, 0, sizeof(options)); /* a zeroed struct: the defaults */
  options.file_name = "scale.kiln";
  if (kiln_device_load_kernel(device, Scale, "scale", &options, &kernel) !=
      KILN_OK)
    return __LINE__;
  if (kiln_buffer_wrap(data, sizeof(data), &buffer) != KILN_OK)
    return __LINE__;
  args[0] =
      kiln_arg_buffer(buffer, kiln_scalar(KILN_F32), KILN_ACCESS_READ_WRITE);
  args[1] = kiln_arg_f32(0.5f);
  if (kiln_device_launch(device, kernel, cubes, args, 2) != KILN_OK)
    return __LINE__;
  for (i = 0; i < 8; ++i)
    if (data[i] != 0.5f * (float)(i + 1))
      return __LINE__;
  if (kiln_buffer_destroy(buffer) != KILN_OK ||
      kiln_kernel_destroy(kernel) != KILN_OK ||
      kiln_device_destroy(device) != KILN_OK)
    return __LINE__;
  if (kiln_last_error()[0] != '\0')
    return __LINE__;
  return enums_from_c();
}
