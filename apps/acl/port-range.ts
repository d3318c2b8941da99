/**
 * An L4 port range as the fewest value/mask pairs OVS can match (a range is not a match field;
 * its aligned power-of-two blocks are). 1000-1999 becomes 7 pairs; 0-65535 becomes no match.
 */
export interface PortMask {
  value: number;
  mask: number;
}

export function portRangeMasks(min: number, max: number): PortMask[] {
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max > 0xffff || min > max) {
    throw new RangeError(`port range ${min}-${max} is not within 0-65535 in order`);
  }
  if (min === 0 && max === 0xffff) return [];
  const out: PortMask[] = [];
  let lo = min;
  while (lo <= max) {
    // The largest aligned block starting at lo that stays within max.
    let size = lo === 0 ? 0x10000 : lo & -lo;
    while (lo + size - 1 > max) size >>= 1;
    out.push({ value: lo, mask: 0xffff & ~(size - 1) });
    lo += size;
  }
  return out;
}
