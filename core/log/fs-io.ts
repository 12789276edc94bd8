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

/**
 * Writes the pieces one after another at `position`, with one vectored write (pwritev) where the kernel takes them
 * all, looping over short writes.
 */
export async function pwriteAll(fd: number, pieces: readonly Uint8Array[], position: number): Promise<void> {
  let rest = pieces.filter((p) => p.byteLength > 0);
  let at = position;
  while (rest.length > 0) {
    const n = await new Promise<number>((resolve, reject) =>
      fs.writev(fd, rest as Uint8Array[], at, (err, written) => (err ? reject(err) : resolve(written))),
    );
    at += n;
    rest = afterBytes(rest, n);
  }
}

/** The pieces that remain once `n` bytes of them were written. */
function afterBytes(pieces: readonly Uint8Array[], n: number): Uint8Array[] {
  let i = 0;
  while (i < pieces.length && n >= pieces[i]!.byteLength) n -= pieces[i++]!.byteLength;
  const rest = pieces.slice(i);
  if (n > 0) rest[0] = rest[0]!.subarray(n);
  return rest;
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
