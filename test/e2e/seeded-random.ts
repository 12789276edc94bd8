/** The fuzz tests' randomness: seeded, so FUZZ_SEED reproduces a failing run exactly. */

/** FUZZ_SEED, or one picked from the clock (each test prints the seed it used). */
export const fuzzSeed = (): number => Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);

/** mulberry32: small, seedable, good enough to pick mutations. */
export function seededRandom(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}
