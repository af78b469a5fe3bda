/** Activities the worker runs, thin over src/domain and src/providers. */
export {};
