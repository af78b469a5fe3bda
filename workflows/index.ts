/** Workflows the worker runs; each lives in its own file. */
export {};
