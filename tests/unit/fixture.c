/*
** The fixture builder of fixture.h: three export shapes as SQL (generated
** from `pragma table_info` of the real exports in ../shared/traces: the
** 3.0 shape from h200-nsys, 2.9 from the nsys 2022.1 dlprof capture, 3.25
** from the nsys 2026.2 nsys-ai captures, TARGET_INFO_GPU of 3.25 from the
** 2026.1 one since the 3.25 captures dropped it; the 3.0 shape is shared
** with the rule-test materialiser of the library), and the code that turns
** SQL into a SQLite file in a private temporary directory.
*/
#include "fixture.h"

#include <dirent.h>
#include <malloc.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ruletest/ruletest_schema.h"

/* ---------------------------------------------------------------- shapes */

/* The 3.0 shape is the library's own (engine/ruletest/ruletest_schema.h): the
** rule-test materialiser writes the same tables. */
const char *const tg_fixture_schema_3_0 = TG_RT_SQL_3_0_ALL;

const char *const tg_fixture_schema_2_9 =
    "CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT);\n"
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, streamId INTEGER NOT NULL "
    "DEFAULT 0, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL DEFAULT 0, "
    "shortName INTEGER NOT NULL DEFAULT 0, mangledName INTEGER, launchType INTEGER, cacheConfig "
    "INTEGER, registersPerThread INTEGER NOT NULL DEFAULT 0, gridX INTEGER NOT NULL DEFAULT 0, gridY "
    "INTEGER NOT NULL DEFAULT 0, gridZ INTEGER NOT NULL DEFAULT 0, blockX INTEGER NOT NULL DEFAULT 0, "
    "blockY INTEGER NOT NULL DEFAULT 0, blockZ INTEGER NOT NULL DEFAULT 0, staticSharedMemory INTEGER "
    "NOT NULL DEFAULT 0, dynamicSharedMemory INTEGER NOT NULL DEFAULT 0, localMemoryPerThread INTEGER "
    "NOT NULL DEFAULT 0, localMemoryTotal INTEGER NOT NULL DEFAULT 0, gridId INTEGER NOT NULL DEFAULT "
    "0, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, streamId INTEGER NOT NULL "
    "DEFAULT 0, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL DEFAULT 0, copyKind "
    "INTEGER NOT NULL DEFAULT 0, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, "
    "srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, "
    "migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, streamId INTEGER NOT NULL "
    "DEFAULT 0, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL DEFAULT 0, bytes "
    "INTEGER NOT NULL DEFAULT 0, graphNodeId INTEGER, memKind INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL DEFAULT 0, globalTid INTEGER, correlationId INTEGER, nameId INTEGER "
    "NOT NULL DEFAULT 0, returnValue INTEGER NOT NULL DEFAULT 0, callchainId INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, streamId INTEGER NOT "
    "NULL DEFAULT 0, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL DEFAULT 0, "
    "eventId INTEGER NOT NULL DEFAULT 0);\n"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL "
    "DEFAULT 0, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, "
    "endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, "
    "doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, "
    "jsonText TEXT);\n"
    "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL DEFAULT 0, id INTEGER NOT NULL DEFAULT 0, "
    "name TEXT, busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, "
    "memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid "
    "INTEGER, chipName TEXT, cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, "
    "nodeMask INTEGER, constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, "
    "maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, "
    "maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER, "
    "maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, "
    "maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, "
    "computeMajor INTEGER, computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER);\n"
    "CREATE TABLE PROFILER_OVERHEAD (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER, "
    "nameId INTEGER NOT NULL DEFAULT 0, returnValue INTEGER NOT NULL DEFAULT 0);\n"
    "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);\n"
    "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL DEFAULT 0, priority INTEGER, globalTid "
    "INTEGER);\n"
    /* the host side, from the 2.9.1 export of public/saxpy (docs/host.md) */
    "CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL "
    "DEFAULT 0, globalTid INTEGER, nameId INTEGER NOT NULL DEFAULT 0, returnValue INTEGER NOT NULL "
    "DEFAULT 0, nestingLevel INTEGER, callchainId INTEGER NOT NULL DEFAULT 0);\n"
    "CREATE TABLE OSRT_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL DEFAULT 0, module INTEGER "
    "NOT NULL DEFAULT 0, kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, "
    "originalIP INTEGER, unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));\n"
    "CREATE TABLE CUDA_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL DEFAULT 0, module INTEGER "
    "NOT NULL DEFAULT 0, unresolved INTEGER, originalIP INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY "
    "(id, stackDepth));\n"
    "CREATE TABLE CUDNN_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL "
    "DEFAULT 0, globalTid INTEGER, nameId INTEGER NOT NULL DEFAULT 0);\n"
    "CREATE TABLE CUBLAS_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL "
    "DEFAULT 0, globalTid INTEGER, nameId INTEGER NOT NULL DEFAULT 0);\n"
    "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);\n"
    "INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_NAME','NVIDIA Nsight "
    "Systems'),('EXPORT_PRODUCT_VERSION','2022.1.3.3'),('EXPORT_PRODUCT_DATE','2022.1'),('EXPORT_SCHEMA_VERSION','2.9.1'),('EXPORT_SCHEMA_VERSION_MAJOR','2'),('EXPORT_SCHEMA_VERSION_MINOR','9'),('EXPORT_SCHEMA_VERSION_MICRO','1');\n";

const char *const tg_fixture_schema_3_25 =
    "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);\n"
    "CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT);\n"
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL DEFAULT 0, correlationId INTEGER, globalPid INTEGER, demangledName "
    "INTEGER NOT NULL DEFAULT 0, shortName INTEGER NOT NULL DEFAULT 0, mangledName INTEGER, "
    "launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL DEFAULT 0, gridX "
    "INTEGER NOT NULL DEFAULT 0, gridY INTEGER NOT NULL DEFAULT 0, gridZ INTEGER NOT NULL DEFAULT 0, "
    "blockX INTEGER NOT NULL DEFAULT 0, blockY INTEGER NOT NULL DEFAULT 0, blockZ INTEGER NOT NULL "
    "DEFAULT 0, staticSharedMemory INTEGER NOT NULL DEFAULT 0, dynamicSharedMemory INTEGER NOT NULL "
    "DEFAULT 0, localMemoryPerThread INTEGER NOT NULL DEFAULT 0, localMemoryTotal INTEGER NOT NULL "
    "DEFAULT 0, gridId INTEGER NOT NULL DEFAULT 0, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, "
    "sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER, "
    "qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER, "
    "clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER, "
    "sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements TEXT NOT NULL DEFAULT '');\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL DEFAULT 0, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT "
    "NULL DEFAULT 0, copyKind INTEGER NOT NULL DEFAULT 0, deprecatedSrcId INTEGER, srcKind INTEGER, "
    "dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId "
    "INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount "
    "INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL DEFAULT 0, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT "
    "NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0, graphNodeId INTEGER, memKind INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL DEFAULT 0, globalTid INTEGER, correlationId INTEGER, nameId INTEGER "
    "NOT NULL DEFAULT 0, returnValue INTEGER NOT NULL DEFAULT 0, callchainId INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, greenContextId "
    "INTEGER, streamId INTEGER NOT NULL DEFAULT 0, correlationId INTEGER, globalPid INTEGER, "
    "deprecatedSyncType INTEGER, syncType INTEGER NOT NULL DEFAULT 0, eventId INTEGER NOT NULL "
    "DEFAULT 0, eventSyncId INTEGER);\n"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL "
    "DEFAULT 0, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, "
    "endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, "
    "doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, "
    "jsonText TEXT, binaryData TEXT);\n"
    "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL DEFAULT 0, id INTEGER NOT NULL DEFAULT 0, "
    "name TEXT, busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, "
    "memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid "
    "INTEGER, chipName TEXT, cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, "
    "nodeMask INTEGER, constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, "
    "maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, "
    "maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER, "
    "maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, "
    "maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, "
    "computeMajor INTEGER, computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER);\n"
    "CREATE TABLE PROFILER_OVERHEAD (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER, "
    "nameId INTEGER NOT NULL DEFAULT 0, overheadType INTEGER NOT NULL DEFAULT 0);\n"
    "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);\n"
    "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL DEFAULT 0, priority INTEGER, globalTid "
    "INTEGER);\n"
    "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, "
    "systemClockNs INTEGER);\n"
    "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);\n"
    "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES "
    "(0,'CUDA_MEMCPY_KIND_UNKNOWN','Unknown'),(1,'CUDA_MEMCPY_KIND_HTOD','Host-to-Device'),(2,'CUDA_MEMCPY_KIND_DTOH','Device-to-Host'),(3,'CUDA_MEMCPY_KIND_HTOA','Host-to-Array'),(4,'CUDA_MEMCPY_KIND_ATOH','Array-to-Host'),(5,'CUDA_MEMCPY_KIND_ATOA','Array-to-Array'),(6,'CUDA_MEMCPY_KIND_ATOD','Array-to-Device'),(7,'CUDA_MEMCPY_KIND_DTOA','Device-to-Array'),(8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device'),(9,'CUDA_MEMCPY_KIND_HTOH','Host-to-Host'),(10,'CUDA_MEMCPY_KIND_PTOP','Peer-to-Peer'),(11,'CUDA_MEMCPY_KIND_UVM_HTOD','Unified "
    "Host-to-Device'),(12,'CUDA_MEMCPY_KIND_UVM_DTOH','Unified "
    "Device-to-Host'),(13,'CUDA_MEMCPY_KIND_UVM_DTOD','Unified Device-to-Device');\n"
    "CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);\n"
    "INSERT INTO ENUM_CUDA_MEM_KIND VALUES "
    "(0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),(1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned'),(2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),(3,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),(4,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),(5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device "
    "Static'),(6,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed "
    "Static'),(7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown');\n"
    "CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);\n"
    "INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES "
    "(0,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN','Unknown'),(1,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE','Event "
    "sync'),(2,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT','Stream wait "
    "sync'),(3,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE','Stream "
    "sync'),(4,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE','Context sync');\n"
    "CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);\n"
    "INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES "
    "(0,'Unknown','Unknown'),(1,'CpuCycles','CpuCycles'),(2,'Instructions','Instructions'),(3,'CacheReferences','CacheReferences'),(4,'L1CacheDataWriteMisses','L1CacheDataWriteMisses'),(5,'L1CacheDataReadMisses','L1CacheDataReadMisses'),(6,'L1CacheInstructionMisses','L1CacheInstructionMisses'),(7,'L2CacheDataWriteMisses','L2CacheDataWriteMisses'),(8,'L2CacheDataReadMisses','L2CacheDataReadMisses'),(9,'L2CacheInstructionMisses','L2CacheInstructionMisses'),(10,'BranchInstructions','BranchInstructions'),(11,'BranchMisses','BranchMisses'),(12,'BusCycles','BusCycles'),(13,'CpuClock','CpuClock'),(14,'TaskClock','TaskClock'),(15,'PageFault','PageFault'),(16,'ContextSwitches','ContextSwitches'),(17,'CpuMigrations','CpuMigrations'),(18,'PageFaultsMin','PageFaultsMin'),(19,'PageFaultsMax','PageFaultsMax'),(20,'AlignmentFaults','AlignmentFaults'),(21,'EmulationFaults','EmulationFaults'),(22,'ThreadState','ThreadState'),(23,'Frames','Frames'),(24,'Annotations','Annotations'),(25,'SchedSwitch','SchedSwitch'),(26,'SchedWakeup','SchedWakeup'),(27,'Command','Command'),(28,'Mmap','Mmap'),(29,'MemUsage','MemUsage'),(30,'Emc','Emc'),(31,'Composite','Composite'),(32,'NvtxEvents','NvtxEvents'),(33,'NvtxCategory','NvtxCategory'),(34,'NvtxMark','NvtxMark'),(35,'NvtxPushRange','NvtxPushRange'),(36,'NvtxPopRange','NvtxPopRange'),(37,'NvtxStartRange','NvtxStartRange'),(38,'NvtxEndRange','NvtxEndRange'),(39,'NvtxThread','NvtxThread'),(40,'PowerRate','PowerRate'),(41,'Sched','Sched'),(42,'CpuCyclesSelf','CpuCyclesSelf'),(43,'CpuCyclesTotal','CpuCyclesTotal'),(44,'CpuCyclesSelfPlus','CpuCyclesSelfPlus'),(45,'Cuda','Cuda'),(46,'CudaDevice','CudaDevice'),(47,'TraceProcess','TraceProcess'),(48,'TraceFunctions','TraceFunctions'),(49,'Diagnostic','Diagnostic'),(50,'GlWorkload','GlWorkload'),(51,'BandwidthUsage','BandwidthUsage'),(52,'KhrDebugMark','KhrDebugMark'),(53,'KhrDebugPushRange','KhrDebugPushRange'),(54,'KhrDebugPopRange','KhrDebugPopRange'),(55,'KhrDebugGpuMark','KhrDebugGpuMark'),(56,'KhrDebugGpuPushRange','KhrDebugGpuPushRange'),(57,'KhrDebugGpuPopRange','KhrDebugGpuPopRange'),(58,'GpuCtxsw','GpuCtxsw'),(59,'NvtxPushPopRange','NvtxPushPopRange'),(60,'NvtxStartEndRange','NvtxStartEndRange'),(61,'ProfTime','ProfTime'),(62,'KhrDebugPushPopRange','KhrDebugPushPopRange'),(63,'KhrDebugGpuPushPopRange','KhrDebugGpuPushPopRange'),(64,'NvtxtCategory','NvtxtCategory'),(65,'NvtxtMark','NvtxtMark'),(66,'NvtxtPushRange','NvtxtPushRange'),(67,'NvtxtPopRange','NvtxtPopRange'),(68,'NvtxtStartRange','NvtxtStartRange'),(69,'NvtxtEndRange','NvtxtEndRange'),(70,'NvtxtPushPopRange','NvtxtPushPopRange'),(71,'NvtxtStartEndRange','NvtxtStartEndRange'),(72,'NvtxtMetaThread','NvtxtMetaThread'),(73,'NvtxtMetaProcess','NvtxtMetaProcess'),(74,'NvtxtMetaFileDisplay','NvtxtMetaFileDisplay'),(75,'NvtxDomainCreate','NvtxDomainCreate'),(76,'NvtxDomainDestroy','NvtxDomainDestroy'),(77,'NvnGpuCmdBuf','NvnGpuCmdBuf'),(78,'TraceVSync','TraceVSync'),(79,'CudaDeviceKernel','CudaDeviceKernel'),(80,'CudaDeviceMemory','CudaDeviceMemory'),(81,'Pmu','Pmu'),(82,'NvnGpuDraw','NvnGpuDraw'),(83,'NvnGpuCompute','NvnGpuCompute'),(84,'NvnGpuDebug','NvnGpuDebug'),(85,'OS "
    "runtime libraries','OS runtime "
    "libraries'),(86,'CuDNN','CuDNN'),(87,'CuBLAS','CuBLAS'),(88,'NvMedia','NvMedia'),(89,'OpenACC','OpenACC'),(90,'Correlation','Correlation'),(91,'DX12','DX12'),(92,'DX12Workload','DX12Workload'),(93,'PmuRawEvent','PmuRawEvent'),(94,'GraphicsFrame','GraphicsFrame'),(95,'Vulkan','Vulkan'),(96,'VulkanWorkload','VulkanWorkload'),(97,'NvtxNameCudaDevice','NvtxNameCudaDevice'),(98,'NvtxNameCudaContext','NvtxNameCudaContext'),(99,'NvtxNameCudaStream','NvtxNameCudaStream'),(100,'SystemEvent','SystemEvent'),(101,'GpuMemoryEvent','GpuMemoryEvent'),(102,'DX12CreateObject','DX12CreateObject'),(103,'VulkanCreateObject','VulkanCreateObject'),(104,'UnitTraceEvent','UnitTraceEvent'),(105,'CustomETWEvent','CustomETWEvent'),(106,'CudaSyncEvent','CudaSyncEvent'),(107,'SLIEvent "
    "(DEPRECATED)','SLIEvent "
    "(DEPRECATED)'),(108,'CudaBacktrace','CudaBacktrace'),(109,'WddmEvent','WddmEvent'),(110,'DX11','DX11'),(111,'DX11CreateObject','DX11CreateObject'),(112,'DXGI','DXGI'),(113,'CudaGraphNodeCreation','CudaGraphNodeCreation'),(114,'OpenMP','OpenMP'),(115,'UncorePmuEvent','UncorePmuEvent'),(116,'UncorePmuCarmel','UncorePmuCarmel'),(117,'CudaDeviceMemoryUsage','CudaDeviceMemoryUsage'),(118,'ETWDxgKrnlEvent','ETWDxgKrnlEvent'),(119,'CudaUvmCpuPageFaultEvent','CudaUvmCpuPageFaultEvent'),(120,'CudaUvmGpuPageFaultEvent','CudaUvmGpuPageFaultEvent'),(121,'NICMetricsValuesEvent','NICMetricsValuesEvent'),(122,'NICMetricsListEvent','NICMetricsListEvent'),(123,'InterruptHandler','InterruptHandler'),(124,'NvEncode','NvEncode'),(125,'NVDecode','NVDecode'),(126,'nvJPEG','nvJPEG'),(127,'CudaEventRecord','CudaEventRecord'),(128,'PerfEventCountEvent','PerfEventCountEvent'),(129,'CudaDeviceMemoryPool','CudaDeviceMemoryPool'),(130,'CudaDeviceGraph','CudaDeviceGraph'),(131,'CudaGraphExecCreation','CudaGraphExecCreation'),(132,'CudaGraphCreation','CudaGraphCreation'),(133,'CudaGraphClone','CudaGraphClone'),(134,'GpuMemoryTransferEvent','GpuMemoryTransferEvent'),(135,'GlTrace','GlTrace'),(136,'GpuVideoEngineWorkload','GpuVideoEngineWorkload'),(137,'IBSwitchMetricsValuesEvent','IBSwitchMetricsValuesEvent'),(138,'GenericEvent','GenericEvent'),(139,'UncorePmuT23xScf','UncorePmuT23xScf'),(140,'UncorePmuT23xDsu','UncorePmuT23xDsu'),(141,'IBSwitchCongestionEvent','IBSwitchCongestionEvent'),(142,'CudaDeviceMemcpy','CudaDeviceMemcpy'),(143,'PerfMetricValueEvent','PerfMetricValueEvent'),(144,'OpenXREvent','OpenXREvent'),(145,'TegraInternalEvent','TegraInternalEvent'),(146,'TraceStartFinish','TraceStartFinish'),(147,'Syscall','Syscall'),(148,'CudaConfidentialComputeKeyRotation','CudaConfidentialComputeKeyRotation'),(149,'CudaGraphExecNodeSetParams','CudaGraphExecNodeSetParams'),(150,'NvApi','NvApi'),(151,'CudaHostFunc','CudaHostFunc'),(152,'CudaApi','CudaApi'),(153,'Overhead','Overhead'),(154,'CudaOverhead','CudaOverhead');\n"
    "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME','NVIDIA Nsight "
    "Systems'),('EXPORT_PRODUCT_VERSION','2026.2.1.210'),('EXPORT_PRODUCT_DATE','2026.2'),('EXPORT_SCHEMA_VERSION','3.25.0'),('EXPORT_SCHEMA_VERSION_MAJOR','3'),('EXPORT_SCHEMA_VERSION_MINOR','25'),('EXPORT_SCHEMA_VERSION_MICRO','0');\n";

/* ---------------------------------------------------------------- builder */

bool tg_fixture_append(char **sql, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return false;
    /* The length of the buffer appended to last: a fixture of 60,000
    ** statements is built one at a time, and strlen over it each time is
    ** quadratic (under valgrind, whose strlen reads byte by byte, minutes).
    ** Trusted only while that buffer still ends where it ended (callers
    ** grow their buffers through this function alone). */
    static _Thread_local const char *last;
    static _Thread_local size_t last_len;
    size_t old = 0;
    if (*sql && *sql == last && last_len < malloc_usable_size(*sql) && !(*sql)[last_len] &&
        (last_len == 0 || (*sql)[last_len - 1]))
        old = last_len;
    else if (*sql)
        old = strlen(*sql);
    size_t need = old + (size_t)n + 1;
    char *p = *sql;
    /* doubling: a fixture of 60,000 statements is appended to one at a
    ** time, and a sanitizer's realloc copies the whole buffer every time */
    if (!p || malloc_usable_size(p) < need) {
        size_t cap = p ? 2 * malloc_usable_size(p) : 256;
        if (cap < need) cap = need;
        if (!(p = realloc(*sql, cap))) return false;
    }
    va_start(ap, fmt);
    vsnprintf(p + old, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *sql = p;
    last = p;
    last_len = old + (size_t)n;
    return true;
}

char *tg_fixture_from_sql(const char *sql)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tg-fixture-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("tg_fixture: mkdtemp");
        return NULL;
    }
    size_t len = strlen(dir) + sizeof "/trace.sqlite";
    char *path = malloc(len);
    if (!path) {
        rmdir(dir);
        return NULL;
    }
    snprintf(path, len, "%s/trace.sqlite", dir);
    sqlite3 *db = NULL;
    char *err = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "BEGIN", NULL, NULL, &err);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "tg_fixture: %s\n", err ? err : db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_free(err);
    if (sqlite3_close(db) != SQLITE_OK && rc == SQLITE_OK) rc = SQLITE_ERROR;
    if (rc != SQLITE_OK) {
        tg_fixture_remove(path);
        return NULL;
    }
    return path;
}

char *tg_fixture_build(const char *schema_sql, const char *rows_sql)
{
    char *sql = NULL;
    if (!tg_fixture_append(&sql, "%s\n%s", schema_sql ? schema_sql : "", rows_sql ? rows_sql : "")) {
        free(sql);
        return NULL;
    }
    char *path = tg_fixture_from_sql(sql);
    free(sql);
    return path;
}

void tg_fixture_remove(char *path)
{
    if (!path) return;
    /* Only ever clean a directory tg_fixture_from_sql made: a wrong path
    ** must not empty someone else's folder. */
    char *slash = strrchr(path, '/');
    const char *dirname = NULL;
    if (slash) {
        *slash = 0;
        const char *prev = strrchr(path, '/');
        dirname = prev ? prev + 1 : path;
    }
    if (dirname && strncmp(dirname, "tg-fixture-", 11) == 0) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char file[4096];
            snprintf(file, sizeof file, "%s/%s", path, e->d_name);
            unlink(file);
        }
        if (d) closedir(d);
        rmdir(path);
    }
    free(path);
}
