#ifndef SEALEDPUSH_CFUZZDRIVER_H
#define SEALEDPUSH_CFUZZDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// The libFuzzer callback shape (`LLVMFuzzerTestOneInput`).
typedef int (*sp_fuzz_callback)(const uint8_t *data, size_t size);

/// Runs libFuzzer's driver (`LLVMFuzzerRunDriver`, from the `-sanitize=fuzzer` runtime) with a callback.
/// SwiftPM links executables with `main` aliased to `<Module>_main`, so libFuzzer's own `main` is never used;
/// each target's `<Module>_main` calls this instead.
int sp_fuzz_run(int argc, char **argv, sp_fuzz_callback callback);

#endif
