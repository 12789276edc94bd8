/**
 * Thin promise wrappers over callback-style node:fs on raw file descriptors. They are measurably cheaper than
 * FileHandle on the group-commit hot path, and positional writes (pwrite) never depend on O_APPEND.
 */
import fs from "node:fs";

export const openFd = (file: string, flags: string | number): Promise<number> =>
  new Promise((resolve, reject) => fs.open(file, flags, 0o644, (err, fd) => (err ? reject(err) : resolve(fd))));

export const closeFd = (fd: number): Promise<void> =>
  new Promise((resolve, reject) => fs.close(fd, (err) => (err ? reject(err) : resolve())));

export const fdatasync = (fd: number): Promise<void> =>
  new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));

export const ftruncate = (fd: number, len: number): Promise<void> =>
  new Promise((resolve, reject) => fs.ftruncate(fd, len, (err) => (err ? reject(err) : resolve())));

export const fstatSize = (fd: number): Promise<number> =>
  new Promise((resolve, reject) => fs.fstat(fd, (err, st) => (err ? reject(err) : resolve(st.size))));

/** Writes all of buf at `position`, looping over short writes. */
export async function pwriteAll(fd: number, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const n = await new Promise<number>((resolve, reject) =>
      fs.write(fd, buf, done, buf.length - done, position + done, (err, written) => (err ? reject(err) : resolve(written))),
    );
    done += n;
  }
}

/** Reads up to `length` bytes at `position` into buf[offset..]; returns the byte count (0 at end of file). */
export const pread = (fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<number> =>
  new Promise((resolve, reject) =>
    fs.read(fd, buf, offset, length, position, (err, n) => (err ? reject(err) : resolve(n))),
  );

/** fsyncs a directory so that file creations, renames and deletions in it survive a crash. */
export async function fsyncDir(dir: string): Promise<void> {
  const fd = await openFd(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
  } finally {
    await closeFd(fd);
  }
}
