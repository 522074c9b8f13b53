// The kill-point shim (LD_PRELOAD): every system call that changes a file is a
// "point", numbered from 1 in the order the process makes them. Environment:
//   CABINET_KILLPOINT_KILL=N     SIGKILL just before point N
//   CABINET_KILLPOINT_FAIL=N     point N returns -1 once, doing nothing
//   CABINET_KILLPOINT_ERRNO=E    the errno of that failure (default 28, ENOSPC)
//   CABINET_KILLPOINT_LOG=path   appends "N call target" for every point
//   CABINET_KILLPOINT_HIT=path   appends "N call target" for each point killed or failed
//                                (a run that fails one point and is killed at a later one
//                                gets two lines), and "N end" when the process exits
//                                normally, N the number of points it made
//   CABINET_KILLPOINT_ARM=wait   count nothing until cabinet_killpoint_arm()
// Writes to fds 0-2 and to pipes, sockets and ttys are not points: only regular
// files and directories (fsync of a directory makes a rename durable).
// Tokyo Cabinet writes most records through a shared mmap (no system call): the
// points are the system calls around them, which is where a crash can tear a file.
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include "KillPointShim.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

// glibc's fortified opens (_FORTIFY_SOURCE callers); not in the headers without it.
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);

static unsigned long counter, kill_at, fail_at;
static int fail_errno = 28, armed = 1, failed_once;
static const char *log_path, *hit_path;
static void log_point(const char *path, unsigned long number, const char *call, const char *target);

__attribute__((constructor)) static void killpoint_init(void) {
    const char *value;
    if ((value = getenv("CABINET_KILLPOINT_KILL"))) kill_at = strtoul(value, NULL, 10);
    if ((value = getenv("CABINET_KILLPOINT_FAIL"))) fail_at = strtoul(value, NULL, 10);
    if ((value = getenv("CABINET_KILLPOINT_ERRNO"))) fail_errno = atoi(value);
    if ((value = getenv("CABINET_KILLPOINT_ARM")) && strcmp(value, "wait") == 0) armed = 0;
    log_path = getenv("CABINET_KILLPOINT_LOG");
    hit_path = getenv("CABINET_KILLPOINT_HIT");
    // The shim is for this process only. Under `make asan` it is built with
    // AddressSanitizer, so a process it was preloaded into without that runtime
    // fails to start: the symbolizer that the sanitizer starts to name a
    // report's frames was such a process, and reports came out as addresses.
    unsetenv("LD_PRELOAD");
}

// The points a run made, for a run that ended before the point it was to kill
// or fail: the harness tells "finished first" from a hit that went unrecorded.
__attribute__((destructor)) static void killpoint_end(void) {
    if (hit_path) log_point(hit_path, __atomic_load_n(&counter, __ATOMIC_SEQ_CST), "end", "");
}

void cabinet_killpoint_arm(void) { __atomic_store_n(&armed, 1, __ATOMIC_SEQ_CST); }
void cabinet_killpoint_disarm(void) { __atomic_store_n(&armed, 0, __ATOMIC_SEQ_CST); }

/// Where fd points, through /proc (readlink is not a point, so this never recurses).
static void describe_fd(int fd, char *out, size_t size) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, out, size - 1);
    if (length < 0) length = snprintf(out, size, "fd %d", fd);
    out[length < (ssize_t)size ? length : (ssize_t)size - 1] = 0;
}

/// A path relative to dirfd, made absolute for the log.
static void describe_at(int dirfd, const char *path, char *out, size_t size) {
    if (!path) { snprintf(out, size, "?"); return; }
    if (path[0] == '/' || dirfd == AT_FDCWD) { snprintf(out, size, "%s", path); return; }
    char dir[2048];
    describe_fd(dirfd, dir, sizeof dir);
    snprintf(out, size, "%s/%s", dir, path);
}

/// Appends one line to the log with raw system calls (the shim must not see itself).
static void log_point(const char *path, unsigned long number, const char *call, const char *target) {
    char line[4600];
    int length = snprintf(line, sizeof line, "%lu %s %s\n", number, call, target);
    if (length < 0) return;
    if (length >= (int)sizeof line) { length = sizeof line - 1; line[length - 1] = '\n'; }
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    syscall(SYS_write, fd, line, (size_t)length);
    syscall(SYS_close, fd);
}

/// Counts a point: kills before it, or returns 1 (errno set) when it must fail.
/// `target` is filled in only when a log needs it: `describe` does that.
typedef void (*describer)(const void *context, char *out, size_t size);
static int point(const char *call, describer describe, const void *context) {
    if (!__atomic_load_n(&armed, __ATOMIC_SEQ_CST)) return 0;
    unsigned long number = __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST);
    int hit = number == kill_at || number == fail_at;
    if (log_path || (hit && hit_path)) {
        char target[4200];
        describe(context, target, sizeof target);
        if (log_path) log_point(log_path, number, call, target);
        // The call this run hit, named from the run itself: where the number of
        // points varies between runs (a pool's commit groups), the counting
        // run's call at the same number may be another one.
        if (hit && hit_path) log_point(hit_path, number, call, target);
    }
    // Naming the call first is work done before the kill, but none on the store's
    // files: other threads may run meanwhile, as they may at any instant of a kill.
    if (number == kill_at) syscall(SYS_kill, getpid(), SIGKILL);
    if (number == fail_at && !__atomic_exchange_n(&failed_once, 1, __ATOMIC_SEQ_CST)) {
        errno = fail_errno;
        return 1;
    }
    return 0;
}

struct at_path { int dirfd; const char *path; };
struct two_paths { int fromfd; const char *from; int tofd; const char *to; };
static void describe_path(const void *c, char *out, size_t size) {
    const struct at_path *p = c;
    describe_at(p->dirfd, p->path, out, size);
}
static void describe_two(const void *c, char *out, size_t size) {
    const struct two_paths *p = c;
    char from[2100];
    describe_at(p->fromfd, p->from, from, sizeof from);
    int length = snprintf(out, size, "%s -> ", from);
    if (length > 0 && (size_t)length < size) describe_at(p->tofd, p->to, out + length, size - (size_t)length);
}
static void describe_fd_context(const void *c, char *out, size_t size) { describe_fd(*(const int *)c, out, size); }
static void describe_address(const void *c, char *out, size_t size) { snprintf(out, size, "mapping %p", *(void *const *)c); }

/// Whether a call on fd changes a file: regular files and directories above stderr.
static int is_file(int fd) {
    if (fd <= 2 || !__atomic_load_n(&armed, __ATOMIC_SEQ_CST)) return 0;
    struct stat status;
    if (fstat(fd, &status) != 0) return 0;
    return S_ISREG(status.st_mode) || S_ISDIR(status.st_mode);
}

#define REAL(name) static __typeof__(name) *real; if (!real) real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static int fd_point(const char *call, int fd) {
    return is_file(fd) && point(call, describe_fd_context, &fd);
}
static int path_point(const char *call, int dirfd, const char *path) {
    struct at_path context = { dirfd, path };
    return point(call, describe_path, &context);
}
static int rename_point(const char *call, int fromfd, const char *from, int tofd, const char *to) {
    struct two_paths context = { fromfd, from, tofd, to };
    return point(call, describe_two, &context);
}
static int changes(int flags) { return (flags & (O_CREAT | O_TRUNC)) != 0; }
static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(arguments, int) : 0;
}

// Writing and sizing file contents.
ssize_t write(int fd, const void *buf, size_t n) { REAL(write); return fd_point("write", fd) ? -1 : real(fd, buf, n); }
ssize_t pwrite(int fd, const void *buf, size_t n, off_t at) { REAL(pwrite); return fd_point("pwrite", fd) ? -1 : real(fd, buf, n, at); }
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t at) { REAL(pwrite64); return fd_point("pwrite64", fd) ? -1 : real(fd, buf, n, at); }
ssize_t writev(int fd, const struct iovec *v, int n) { REAL(writev); return fd_point("writev", fd) ? -1 : real(fd, v, n); }
ssize_t pwritev(int fd, const struct iovec *v, int n, off_t at) { REAL(pwritev); return fd_point("pwritev", fd) ? -1 : real(fd, v, n, at); }
int ftruncate(int fd, off_t length) { REAL(ftruncate); return fd_point("ftruncate", fd) ? -1 : real(fd, length); }
int ftruncate64(int fd, off64_t length) { REAL(ftruncate64); return fd_point("ftruncate64", fd) ? -1 : real(fd, length); }
int truncate(const char *path, off_t length) { REAL(truncate); return path_point("truncate", AT_FDCWD, path) ? -1 : real(path, length); }
int fallocate(int fd, int mode, off_t at, off_t length) { REAL(fallocate); return fd_point("fallocate", fd) ? -1 : real(fd, mode, at, length); }
int posix_fallocate(int fd, off_t at, off_t length) { REAL(posix_fallocate); return fd_point("posix_fallocate", fd) ? fail_errno : real(fd, at, length); }
ssize_t copy_file_range(int in, off64_t *inAt, int out, off64_t *outAt, size_t n, unsigned flags) {
    REAL(copy_file_range); return fd_point("copy_file_range", out) ? -1 : real(in, inAt, out, outAt, n, flags);
}
ssize_t sendfile(int out, int in, off_t *at, size_t n) { REAL(sendfile); return fd_point("sendfile", out) ? -1 : real(out, in, at, n); }

// Durability.
int fsync(int fd) { REAL(fsync); return fd_point("fsync", fd) ? -1 : real(fd); }
int fdatasync(int fd) { REAL(fdatasync); return fd_point("fdatasync", fd) ? -1 : real(fd); }
int msync(void *address, size_t length, int flags) {
    REAL(msync); return point("msync", describe_address, &address) ? -1 : real(address, length, flags);
}

// Directory entries.
int rename(const char *from, const char *to) { REAL(rename); return rename_point("rename", AT_FDCWD, from, AT_FDCWD, to) ? -1 : real(from, to); }
int renameat(int fromfd, const char *from, int tofd, const char *to) {
    REAL(renameat); return rename_point("renameat", fromfd, from, tofd, to) ? -1 : real(fromfd, from, tofd, to);
}
int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned flags) {
    REAL(renameat2); return rename_point("renameat2", fromfd, from, tofd, to) ? -1 : real(fromfd, from, tofd, to, flags);
}
int link(const char *from, const char *to) { REAL(link); return rename_point("link", AT_FDCWD, from, AT_FDCWD, to) ? -1 : real(from, to); }
int linkat(int fromfd, const char *from, int tofd, const char *to, int flags) {
    REAL(linkat); return rename_point("linkat", fromfd, from, tofd, to) ? -1 : real(fromfd, from, tofd, to, flags);
}
int symlink(const char *target, const char *path) { REAL(symlink); return path_point("symlink", AT_FDCWD, path) ? -1 : real(target, path); }
int unlink(const char *path) { REAL(unlink); return path_point("unlink", AT_FDCWD, path) ? -1 : real(path); }
int unlinkat(int dirfd, const char *path, int flags) { REAL(unlinkat); return path_point("unlinkat", dirfd, path) ? -1 : real(dirfd, path, flags); }
int remove(const char *path) { REAL(remove); return path_point("remove", AT_FDCWD, path) ? -1 : real(path); }
int rmdir(const char *path) { REAL(rmdir); return path_point("rmdir", AT_FDCWD, path) ? -1 : real(path); }
int mkdir(const char *path, mode_t mode) { REAL(mkdir); return path_point("mkdir", AT_FDCWD, path) ? -1 : real(path, mode); }
int mkdirat(int dirfd, const char *path, mode_t mode) { REAL(mkdirat); return path_point("mkdirat", dirfd, path) ? -1 : real(dirfd, path, mode); }

// Opens that create or truncate.
int open(const char *path, int flags, ...) {
    REAL(open); va_list a; va_start(a, flags); mode_t mode = mode_argument(flags, a); va_end(a);
    return changes(flags) && path_point("open", AT_FDCWD, path) ? -1 : real(path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    REAL(open64); va_list a; va_start(a, flags); mode_t mode = mode_argument(flags, a); va_end(a);
    return changes(flags) && path_point("open64", AT_FDCWD, path) ? -1 : real(path, flags, mode);
}
int openat(int dirfd, const char *path, int flags, ...) {
    REAL(openat); va_list a; va_start(a, flags); mode_t mode = mode_argument(flags, a); va_end(a);
    return changes(flags) && path_point("openat", dirfd, path) ? -1 : real(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...) {
    REAL(openat64); va_list a; va_start(a, flags); mode_t mode = mode_argument(flags, a); va_end(a);
    return changes(flags) && path_point("openat64", dirfd, path) ? -1 : real(dirfd, path, flags, mode);
}
int __open_2(const char *path, int flags) { REAL(__open_2); return changes(flags) && path_point("open", AT_FDCWD, path) ? -1 : real(path, flags); }
int __open64_2(const char *path, int flags) { REAL(__open64_2); return changes(flags) && path_point("open64", AT_FDCWD, path) ? -1 : real(path, flags); }
int creat(const char *path, mode_t mode) { REAL(creat); return path_point("creat", AT_FDCWD, path) ? -1 : real(path, mode); }
int creat64(const char *path, mode_t mode) { REAL(creat64); return path_point("creat64", AT_FDCWD, path) ? -1 : real(path, mode); }
