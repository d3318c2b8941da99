/** The middle value of a run's samples (the upper middle of an even count), as every bench reports it. */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
