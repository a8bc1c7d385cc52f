// Linux calls that Swift's Glibc module leaves out (it is built without _GNU_SOURCE), declared as the
// C library has them. Each is guarded: on other systems the module declares nothing.
#if defined(__linux__)
#include <stdint.h>

// sync_file_range(2): start writing a file's dirty pages in a byte range (SYNC_FILE_RANGE_WRITE, 2)
// without waiting for them, so that a later fsync(2) has less left to wait for.
int sync_file_range(int fd, int64_t offset, int64_t nbytes, unsigned int flags);
#define PX_SYNC_FILE_RANGE_WRITE 2u
#endif
