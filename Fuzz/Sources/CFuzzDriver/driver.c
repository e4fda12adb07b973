#include "CFuzzDriver.h"

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

int sp_fuzz_run(int argc, char **argv, sp_fuzz_callback callback) {
    return LLVMFuzzerRunDriver(&argc, &argv, callback);
}
