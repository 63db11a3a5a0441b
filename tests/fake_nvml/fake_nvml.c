/* A stand-in libnvidia-ml.so.1 for tests on machines without a GPU: two GPUs with known
 * properties, so the run-time loading of NVML and the mapping of what it says into the system
 * block are exercised for real. Declarations follow nvml.h for the calls gpubench uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct fake_device* nvmlDevice_t;
typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
  unsigned gpu, memory;
} nvmlUtilization_t;
typedef struct {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  unsigned long long value;
} nvmlFieldValue_t;

enum { SUCCESS = 0, ERROR_INVALID_ARGUMENT = 2, ERROR_NOT_SUPPORTED = 3 };
static struct fake_device { int index; } devices[2] = {{0}, {1}};

nvmlReturn_t nvmlInit_v2(void) {
  return SUCCESS;
}
nvmlReturn_t nvmlShutdown(void) {
  return SUCCESS;
}
const char* nvmlErrorString(nvmlReturn_t r) {
  return r == SUCCESS ? "Success" : "Fake error";
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned n) {
  snprintf(v, n, "%s", "999.99.1");
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 2;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i >= 2) return ERROR_INVALID_ARGUMENT;
  *d = &devices[i];
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned n) {
  const char* real = getenv("FAKE_NVML_NAME"); /* a catalog GPU's name, for catalog ceilings */
  if (real) {
    snprintf(name, n, "%s", real);
  } else {
    snprintf(name, n, "Fake GPU %d", d->index);
  }
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned n) {
  snprintf(uuid, n, "GPU-00000000-0000-0000-0000-00000000000%d", d->index);
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  memset(pci, 0, sizeof *pci);
  snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", d->index == 0 ? 0x1B : 0xC1);
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  (void)d;
  m->total = 80ULL << 30;
  m->free = m->total;
  m->used = 0;
  return SUCCESS;
}
/* GPU 1's link trained down to Gen3 x8, as a fault the report must show. */
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned* v) {
  *v = d->index == 0 ? 5 : 3;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned* v) {
  *v = d->index == 0 ? 16 : 8;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned* v) {
  (void)d;
  *v = 5;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned* v) {
  (void)d;
  *v = 16;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned* mw) {
  (void)d;
  *mw = 700000;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
  (void)d;
  *mw = 95000;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned* t) {
  if (sensor != 0) return ERROR_INVALID_ARGUMENT;
  *t = d->index == 0 ? 41 : 87;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* r) {
  *r = d->index == 0 ? 0x1ULL : 0x44ULL; /* idle; sw power cap + hw thermal slowdown */
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* current, int* pending) {
  (void)d;
  *current = 1;
  *pending = 1;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int* active) {
  if (link >= 18) return ERROR_INVALID_ARGUMENT;
  *active = d->index == 0 ? 1 : (link < 16);
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int clock, unsigned* mhz) {
  (void)d;
  if (clock == 1)
    *mhz = 1755;
  else if (clock == 2)
    *mhz = 2619;
  else
    return ERROR_NOT_SUPPORTED;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int clock, unsigned* mhz) {
  (void)d;
  if (clock == 1)
    *mhz = 1980;
  else if (clock == 2)
    *mhz = 2619;
  else
    return ERROR_NOT_SUPPORTED;
  return SUCCESS;
}
/* GPU 1 also had an uncorrectable memory error whose row remap waits for a reset. */
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                         unsigned long long* count) {
  if (type != 1 || (counter != 0 && counter != 1)) return ERROR_INVALID_ARGUMENT;
  *count = d->index == 0 ? 0 : 1;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* corrected, unsigned* uncorrected,
                                       unsigned* pending, unsigned* failure) {
  *corrected = 0;
  *uncorrected = d->index == 0 ? 0 : 1;
  *pending = d->index == 0 ? 0 : 1;
  *failure = 0;
  return SUCCESS;
}

/* Activity, for gpubench watch. GPU 0 is as busy as FAKE_NVML_UTILIZATION says (percent) and
 * receives FAKE_NVML_PCIE_RX_MBPS over PCIe; while it is busy, the caller's children hold compute
 * contexts on it (the watched job). GPU 1 stays idle. */
static unsigned env_number(const char* name) {
  const char* v = getenv(name);
  return v ? (unsigned)strtoul(v, NULL, 10) : 0;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  u->gpu = d->index == 0 ? env_number("FAKE_NVML_UTILIZATION") : 0;
  u->memory = u->gpu / 2;
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned* kB_per_s) {
  if (counter != 0 && counter != 1) return ERROR_INVALID_ARGUMENT;
  *kB_per_s = d->index == 0 && counter == 1 ? env_number("FAKE_NVML_PCIE_RX_MBPS") * 1000 : 0;
  return SUCCESS;
}
/* NVLink: GPU 0 has four links that together move FAKE_NVML_NVLINK_GBPS (GB/s) each way since
 * the library was first asked; links 4 and up, and GPU 1, have none. Counters in KiB. */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  static struct timespec first;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (first.tv_sec == 0 && first.tv_nsec == 0) first = now;
  const double seconds = (double)(now.tv_sec - first.tv_sec) + (now.tv_nsec - first.tv_nsec) / 1e9;
  const double per_link_KiB = env_number("FAKE_NVML_NVLINK_GBPS") * 1e9 / 1024 / 4 * seconds;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t* v = &values[i];
    const int throughput = v->fieldId == 138 || v->fieldId == 139;
    if (!throughput || d->index != 0 || v->scopeId >= 4) {
      v->nvmlReturn = ERROR_NOT_SUPPORTED;
      continue;
    }
    v->nvmlReturn = SUCCESS;
    v->valueType = 3; /* unsigned long long */
    v->value = (unsigned long long)per_link_KiB;
  }
  return SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* count,
                                                      nvmlProcessInfo_t* infos) {
  unsigned n = 0;
  if (d->index == 0 && env_number("FAKE_NVML_UTILIZATION") > 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
    FILE* f = fopen(path, "r");
    int pid = 0;
    while (f && fscanf(f, "%d", &pid) == 1 && n < *count) {
      infos[n].pid = (unsigned)pid;
      infos[n].usedGpuMemory = 1ULL << 30;
      infos[n].gpuInstanceId = infos[n].computeInstanceId = 0;
      ++n;
    }
    if (f) fclose(f);
  }
  *count = n;
  return SUCCESS;
}
