// Express 4 ships no types of its own; its API as used here matches Express 5's.
declare module 'express4' {
  import express from 'express';
  export default express;
}
