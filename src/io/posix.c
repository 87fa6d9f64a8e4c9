/* The POSIX driver: files of any file system the kernel mounts (ext4, xfs, NFS, Lustre and GPFS
 * through their POSIX clients), reached by open/preadv/pwritev/ftruncate/posix_fallocate/fsync and
 * open file description locks. A program may name it by the prefixes written for ROMIO
 * ("ufs:/scratch/out", "lustre:/...", ...): each is stripped, and this driver serves them all. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"

static int posix_claims(const char *filename, const char **path)
{
    static const char *const prefixes[] = { "ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:", "panfs:", "xfs:" };
    *path = filename;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(filename, prefixes[i], strlen(prefixes[i])) == 0)
            *path = filename + strlen(prefixes[i]);
    return 1;
}

/* A write-only file is opened for reading too where the permissions allow (collective writes and
 * sieved ones read the holes between the pieces they write); the amode still refuses reads. */
static int posix_open(const char *path, int amode, int create, int excl, unsigned perm, int *fd)
{
    int extra = (create ? O_CREAT : 0) | (excl ? O_EXCL : 0);
    int rw = (amode & (MPI_MODE_RDWR | MPI_MODE_WRONLY)) ? O_RDWR : O_RDONLY;
    *fd = open(path, O_CLOEXEC | rw | extra, (mode_t)perm);
    if (*fd < 0 && errno == EACCES && (amode & MPI_MODE_WRONLY))
        *fd = open(path, O_CLOEXEC | O_WRONLY | extra, (mode_t)perm);
    return *fd < 0 ? errno : 0;
}

static int posix_close(int fd)
{
    return close(fd) != 0 ? errno : 0;
}

static int posix_remove(const char *path)
{
    return unlink(path) != 0 ? errno : 0;
}

static ssize_t posix_preadv(int fd, const struct iovec *iov, int n, MPI_Offset off)
{
    ssize_t r;
    do
        r = preadv(fd, iov, n, (off_t)off);
    while (r < 0 && errno == EINTR);
    return r;
}

static ssize_t posix_pwritev(int fd, const struct iovec *iov, int n, MPI_Offset off)
{
    ssize_t r;
    do
        r = pwritev(fd, iov, n, (off_t)off);
    while (r < 0 && errno == EINTR);
    return r;
}

static int posix_size(int fd, MPI_Offset *size)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return errno;
    *size = (MPI_Offset)sb.st_size;
    return 0;
}

/* A file already of that size is left alone: on ext4 (auto_da_alloc) a truncate to 0 -- even of
 * an empty file -- makes the next close start writing back every page written since, which
 * holds that close up for tens of milliseconds (IOR's MPI-IO open calls MPI_File_set_size(0) on
 * the file it just created: its close took 50 ms of 77 for 128 MiB). */
static int posix_resize(int fd, MPI_Offset size)
{
    MPI_Offset now = -1;
    if (posix_size(fd, &now) == 0 && now == size)
        return 0;
    return ftruncate(fd, (off_t)size) != 0 ? errno : 0;
}

static int posix_allocate(int fd, MPI_Offset size)
{
    MPI_Offset now = 0;
    int r = posix_size(fd, &now);
    if (r || size <= now)
        return r;
    r = posix_fallocate(fd, 0, (off_t)size);
    if (r == EOPNOTSUPP || r == EINVAL) /* a file system without allocation: extend */
        r = posix_resize(fd, size);
    return r;
}

static int posix_sync(int fd)
{
    return fsync(fd) != 0 ? errno : 0;
}

/* Open file description locks: per open, not per process, so the ranks' opens exclude each other
 * (and a rank's threads, which share its open, are serialized by the library). */
static int posix_lock(int fd, int type, MPI_Offset lo, MPI_Offset hi)
{
    struct flock lk = {
        .l_type = (short)type, .l_whence = SEEK_SET, .l_start = (off_t)lo, .l_len = hi ? (off_t)(hi - lo) : 0
    };
    int r;
    do
        r = fcntl(fd, type == F_UNLCK ? F_OFD_SETLK : F_OFD_SETLKW, &lk);
    while (r < 0 && errno == EINTR);
    return r < 0 ? (errno ? errno : EIO) : 0;
}

const struct aptus_io_driver aptus_io_posix = {
    .name = "posix",
    .claims = posix_claims,
    .open = posix_open,
    .close = posix_close,
    .remove = posix_remove,
    .preadv = posix_preadv,
    .pwritev = posix_pwritev,
    .size = posix_size,
    .resize = posix_resize,
    .allocate = posix_allocate,
    .sync = posix_sync,
    .lock = posix_lock,
};

const struct aptus_io_driver *aptus_io_driver_for(const char *filename, const char **path)
{
    static const struct aptus_io_driver *const drivers[] = { &aptus_io_posix };
    for (size_t i = 0; i < sizeof drivers / sizeof drivers[0]; i++)
        if (drivers[i]->claims(filename, path))
            return drivers[i];
    return NULL;
}
