/* MPI-IO with more than 2 GiB in one call (label big: once, not under the sanitizers): at one
 * rank, 2 GiB + 12 KiB of bytes written by one MPI_File_write_at_c and read back by one
 * MPI_File_read_at_all_c, then 2^29 + 3 ints (over 2 GiB) through a strided view by one
 * MPI_File_write_all_c and read back; counts from MPI_Get_count_c, every byte checked. Skips
 * (exit 77) when the machine has less than 6 GiB of free memory or 5 GiB free in /tmp. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "mtest.h"

#define GIB ((size_t)1 << 30)

static unsigned char pat(size_t i)
{
    return (unsigned char)(i * 2654435761u >> 13);
}

int main(int argc, char **argv)
{
    struct statvfs vfs;
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages < 0 || (size_t)pages * (size_t)psz < 6 * GIB || statvfs("/tmp", &vfs) != 0 ||
        (size_t)vfs.f_bavail * vfs.f_frsize < 5 * GIB) {
        printf("SKIP: needs 6 GiB of free memory and 5 GiB free in /tmp\n");
        return 77;
    }
    MPI_Init(&argc, &argv);
    char name[] = "/tmp/aptus-iobig-XXXXXX";
    int fd = mkstemp(name);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    MPI_File fh;
    MPI_Status st;
    MPI_Count n;
    MPI_CHECK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));

    /* bytes: one write, one collective read */
    size_t len = 2 * GIB + 12288;
    unsigned char *buf = malloc(len);
    CHECK(buf != NULL, "malloc %zu", len);
    for (size_t i = 0; i < len; i++)
        buf[i] = pat(i);
    MPI_CHECK(MPI_File_write_at_c(fh, 4096, buf, (MPI_Count)len, MPI_BYTE, &st));
    MPI_Get_count_c(&st, MPI_BYTE, &n);
    CHECK(n == (MPI_Count)len, "write_at_c moved %lld bytes of %zu", (long long)n, len);
    MPI_Offset size;
    MPI_File_get_size(fh, &size);
    CHECK(size == (MPI_Offset)(len + 4096), "file size %lld", (long long)size);
    memset(buf, 0, len);
    MPI_CHECK(MPI_File_read_at_all_c(fh, 4096, buf, (MPI_Count)len, MPI_BYTE, &st));
    MPI_Get_count_c(&st, MPI_BYTE, &n);
    CHECK(n == (MPI_Count)len, "read_at_all_c moved %lld bytes of %zu", (long long)n, len);
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pat(i))
            CHECK(0, "byte %zu read back is %u, expected %u", i, buf[i], pat(i));
    /* at the end of the file: the bytes that are there */
    MPI_CHECK(MPI_File_read_at_c(fh, 4096 + 100, buf, (MPI_Count)len, MPI_BYTE, &st));
    MPI_Get_count_c(&st, MPI_BYTE, &n);
    CHECK(n == (MPI_Count)len - 100, "read at the end moved %lld bytes, expected %zu", (long long)n, len - 100);

    /* ints through a view of every other int: 2^29 + 3 of them, 4 GiB of file */
    MPI_CHECK(MPI_File_set_size(fh, 0));
    size_t cnt = ((size_t)1 << 29) + 3;
    int *iv = (int *)buf;
    for (size_t i = 0; i < cnt; i++)
        iv[i] = (int)(i ^ 0x5a5a5a5a);
    MPI_Datatype every_other;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, every_other, "native", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_write_all_c(fh, iv, (MPI_Count)cnt, MPI_INT, &st));
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == (MPI_Count)cnt, "write_all_c moved %lld ints of %zu", (long long)n, cnt);
    MPI_File_get_size(fh, &size);
    CHECK(size == (MPI_Offset)(8 * cnt - 4), "strided file size %lld", (long long)size);
    memset(iv, 0, cnt * sizeof(int));
    MPI_CHECK(MPI_File_read_at_all_c(fh, 0, iv, (MPI_Count)cnt, MPI_INT, &st));
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == (MPI_Count)cnt, "read_at_all_c moved %lld ints of %zu", (long long)n, cnt);
    for (size_t i = 0; i < cnt; i++)
        if (iv[i] != (int)(i ^ 0x5a5a5a5a))
            CHECK(0, "int %zu read back is %d", i, iv[i]);
    MPI_Type_free(&every_other);
    free(buf);
    MPI_CHECK(MPI_File_close(&fh));
    CHECK(access(name, F_OK) != 0, "the file is left");
    MPI_Finalize();
    printf("No Errors\n");
    return 0;
}
