/**
 * How large the load runs are: their CI size by default, a minute or two
 * each, and the full size of their issue with `LOAD_SIZE=full`.
 */
export const FULL_SIZE = process.env.LOAD_SIZE === 'full';
