/**
 * Durable committed offset of one consumer group: `groups/<group>.offset`.
 *
 * Two 24-byte slots in different disk sectors (at byte 0 and 512) are written alternately, each with a sequence
 * number and a CRC; a commit is one pwrite + fdatasync. Reading picks the valid slot with the highest sequence,
 * so a write torn by a crash leaves the previous commit intact.
 * Slot: [u32 magic][u32 crc32 of bytes 8..24][u64 seq][u64 offset]
 */
import { constants } from "node:fs";
import { crc32 } from "node:zlib";
import { closeFd, fdatasync, openFd, pread, pwriteAll } from "./fs-io.js";

const MAGIC = 0x52574f46; // "RWOF"
const SLOT_BYTES = 24;
const SLOT_POSITIONS = [0, 512] as const;

export interface OffsetStore {
  readonly committed: number;
  commit(offset: number): Promise<void>;
  close(): Promise<void>;
}

function decodeSlot(buf: Buffer): { seq: bigint; offset: number } | undefined {
  if (buf.readUInt32LE(0) !== MAGIC) return undefined;
  if (crc32(buf.subarray(8, SLOT_BYTES)) !== buf.readUInt32LE(4)) return undefined;
  return { seq: buf.readBigUInt64LE(8), offset: Number(buf.readBigUInt64LE(16)) };
}

/** Opens (creating when absent) a group's offset file. A new group starts at `initial`. */
export async function openOffsetStore(file: string, initial: number): Promise<OffsetStore> {
  const fd = await openFd(file, constants.O_RDWR | constants.O_CREAT);
  let seq = 0n;
  let committed = initial;
  for (const pos of SLOT_POSITIONS) {
    const buf = Buffer.alloc(SLOT_BYTES);
    if ((await pread(fd, buf, 0, SLOT_BYTES, pos)) < SLOT_BYTES) continue;
    const slot = decodeSlot(buf);
    if (slot && slot.seq >= seq) {
      seq = slot.seq;
      committed = slot.offset;
    }
  }
  const slot = Buffer.alloc(SLOT_BYTES);
  return {
    get committed() {
      return committed;
    },
    async commit(offset) {
      seq += 1n;
      slot.writeUInt32LE(MAGIC, 0);
      slot.writeBigUInt64LE(seq, 8);
      slot.writeBigUInt64LE(BigInt(offset), 16);
      slot.writeUInt32LE(crc32(slot.subarray(8, SLOT_BYTES)), 4);
      await pwriteAll(fd, [slot], SLOT_POSITIONS[Number(seq % 2n)]);
      await fdatasync(fd);
      committed = offset;
    },
    close: () => closeFd(fd),
  };
}
