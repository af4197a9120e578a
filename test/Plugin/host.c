/*===- host.c - A process that holds other LLVMs, then loads a plugin -----===*
 *
 * kiln-plugin-host PLUGIN [LIBRARY...]
 *
 * Loads each LIBRARY with RTLD_NOW | RTLD_GLOBAL, as a process does that
 * already runs Mesa's llvmpipe, PoCL or llvmlite (Debian's libLLVM-14.so.1
 * and libLLVM-19.so.1 here), then PLUGIN with RTLD_NOW | RTLD_LOCAL, and
 * calls its plugin_run(). Exit status: plugin_run's, or 2 when a library
 * does not load. A plugin that lets the dynamic linker bind its LLVM to the
 * global one aborts inside dlopen (test/Plugin/CMakeLists.txt says why).
 *
 *===----------------------------------------------------------------------===*/

#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  void *plugin;
  int (*run)(void);
  int i, rc;

  if (argc < 2) {
    fprintf(stderr, "usage: %s PLUGIN [LIBRARY...]\n", argv[0]);
    return 2;
  }
  for (i = 2; i < argc; ++i) {
    if (!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL)) {
      fprintf(stderr, "host: %s\n", dlerror());
      return 2;
    }
    printf("host: loaded %s\n", argv[i]);
  }
  fflush(stdout);
  plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    fprintf(stderr, "host: %s\n", dlerror());
    return 2;
  }
  *(void **)&run = dlsym(plugin, "plugin_run");
  if (!run) {
    fprintf(stderr, "host: %s\n", dlerror());
    return 2;
  }
  rc = run();
  printf("host: plugin_run returned %d\n", rc);
  return rc;
}
