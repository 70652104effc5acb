// Package plan decides where a job runs before it trains: the graph's
// size estimated from the job file (EstimateGraphSize), the performance
// model's job (PerfJob) and the methods it ranks (PerfChoices,
// OwnChoices), grid.auto (ResolveAutoGrid, ChooseGrid), an isolated
// job's evaluation grid (ResolveEvalGrid), and the memory check on the
// host (CheckMemory, MemoryLimit, AgreeLimits) and on the GPU
// (CheckDeviceMemory, DeviceOutOfMemory), which refuses a job that would
// not fit with one line naming the fastest grid that does.
package plan
