/*
** The export layout of nsys 2022.4 (schema 3.0.0) as SQL, one macro per
** table: the tables and columns tracegate reads, with the column lists,
** types and NOT NULL constraints of a real export (generated from `pragma
** table_info` of real nsys 2022.4 captures of the trace corpus), the ENUM
** tables filled as that version fills them and the metadata rows naming
** the version. NOT NULL columns other than start/end carry DEFAULT 0 so
** that hand-written test INSERTs may name only the columns they care
** about; the column set is the real one.
**
** One definition, two users: the rule-test materialiser (ruletest_sqlite.c)
** creates the tables an inline event list needs from these macros, and the
** unit-test fixture (tests/unit/fixture.c) concatenates all of them into its
** 3.0 shape.
*/
#ifndef TG_RULETEST_RULETEST_SCHEMA_H
#define TG_RULETEST_RULETEST_SCHEMA_H

#define TG_RT_SQL_3_0_META_TABLE \
    "CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT);\n"

#define TG_RT_SQL_3_0_STRING_IDS \
    "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);\n"

#define TG_RT_SQL_3_0_KERNEL \
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId " \
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, streamId INTEGER NOT NULL " \
    "DEFAULT 0, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL DEFAULT " \
    "0, shortName INTEGER NOT NULL DEFAULT 0, mangledName INTEGER, launchType INTEGER, cacheConfig " \
    "INTEGER, registersPerThread INTEGER NOT NULL DEFAULT 0, gridX INTEGER NOT NULL DEFAULT 0, gridY " \
    "INTEGER NOT NULL DEFAULT 0, gridZ INTEGER NOT NULL DEFAULT 0, blockX INTEGER NOT NULL DEFAULT " \
    "0, blockY INTEGER NOT NULL DEFAULT 0, blockZ INTEGER NOT NULL DEFAULT 0, staticSharedMemory " \
    "INTEGER NOT NULL DEFAULT 0, dynamicSharedMemory INTEGER NOT NULL DEFAULT 0, localMemoryPerThread " \
    "INTEGER NOT NULL DEFAULT 0, localMemoryTotal INTEGER NOT NULL DEFAULT 0, gridId INTEGER NOT " \
    "NULL DEFAULT 0, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);\n"

#define TG_RT_SQL_3_0_MEMCPY \
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId " \
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, streamId INTEGER NOT NULL " \
    "DEFAULT 0, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL DEFAULT 0, copyKind " \
    "INTEGER NOT NULL DEFAULT 0, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId " \
    "INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, " \
    "graphNodeId INTEGER, virtualAddress INTEGER);\n"

#define TG_RT_SQL_3_0_MEMSET \
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId " \
    "INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, streamId INTEGER NOT NULL " \
    "DEFAULT 0, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL DEFAULT 0, bytes " \
    "INTEGER NOT NULL DEFAULT 0, graphNodeId INTEGER, memKind INTEGER);\n"

#define TG_RT_SQL_3_0_RUNTIME \
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass " \
    "INTEGER NOT NULL DEFAULT 0, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL " \
    "DEFAULT 0, returnValue INTEGER NOT NULL DEFAULT 0, callchainId INTEGER);\n"

#define TG_RT_SQL_3_0_SYNC \
    "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, " \
    "deviceId INTEGER NOT NULL DEFAULT 0, contextId INTEGER NOT NULL DEFAULT 0, streamId INTEGER " \
    "NOT NULL DEFAULT 0, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL DEFAULT " \
    "0, eventId INTEGER NOT NULL DEFAULT 0);\n"

#define TG_RT_SQL_3_0_NVTX \
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL DEFAULT " \
    "0, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid " \
    "INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue " \
    "REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText " \
    "TEXT);\n"

#define TG_RT_SQL_3_0_GPU \
    "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL DEFAULT 0, id INTEGER NOT NULL DEFAULT 0, " \
    "name TEXT, busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth " \
    "INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName " \
    "TEXT, cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER, " \
    "constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, " \
    "maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp " \
    "INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock " \
    "INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER, " \
    "maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER, computeMinor INTEGER, smMajor " \
    "INTEGER, smMinor INTEGER);\n"

#define TG_RT_SQL_3_0_OVERHEAD \
    "CREATE TABLE PROFILER_OVERHEAD (start INTEGER NOT NULL, end INTEGER NOT NULL, globalTid INTEGER, " \
    "nameId INTEGER NOT NULL DEFAULT 0, returnValue INTEGER NOT NULL DEFAULT 0);\n"

#define TG_RT_SQL_3_0_PROCESSES \
    "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);\n"

#define TG_RT_SQL_3_0_THREAD_NAMES \
    "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL DEFAULT 0, priority INTEGER, globalTid INTEGER);\n"

/* The host side (docs/host.md): OSRT_API and OSRT_CALLCHAINS as the
** h200-nsys captures (-t osrt) write them; CUDA_CALLCHAINS (--cudabacktrace),
** CUDNN_EVENTS and CUBLAS_EVENTS as the nsys 2022.2 export of
** public/saxpy writes them (schema 2.9.1: the h200 captures did not record
** them; the 3.0 columns are the same). */
#define TG_RT_SQL_3_0_OSRT \
    "CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL " \
    "DEFAULT 0, globalTid INTEGER, nameId INTEGER NOT NULL DEFAULT 0, returnValue INTEGER NOT NULL " \
    "DEFAULT 0, nestingLevel INTEGER, callchainId INTEGER NOT NULL DEFAULT 0);\n"

#define TG_RT_SQL_3_0_OSRT_CALLCHAINS \
    "CREATE TABLE OSRT_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL DEFAULT 0, module INTEGER " \
    "NOT NULL DEFAULT 0, kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, " \
    "originalIP INTEGER, unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));\n"

#define TG_RT_SQL_3_0_CUDA_CALLCHAINS \
    "CREATE TABLE CUDA_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL DEFAULT 0, module INTEGER " \
    "NOT NULL DEFAULT 0, unresolved INTEGER, originalIP INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY " \
    "(id, stackDepth));\n"

#define TG_RT_SQL_3_0_CUDNN \
    "CREATE TABLE CUDNN_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL " \
    "DEFAULT 0, globalTid INTEGER, nameId INTEGER NOT NULL DEFAULT 0);\n"

#define TG_RT_SQL_3_0_CUBLAS \
    "CREATE TABLE CUBLAS_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL " \
    "DEFAULT 0, globalTid INTEGER, nameId INTEGER NOT NULL DEFAULT 0);\n"

#define TG_RT_SQL_3_0_SESSION_START \
    "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);\n"

#define TG_RT_SQL_3_0_ENUM_MEMCPY_OPER \
    "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);\nINSERT " \
    "INTO ENUM_CUDA_MEMCPY_OPER VALUES (0,'CUDA_MEMCPY_KIND_UNKNOWN','Unknown'),(1,'CUDA_MEMCPY_KIND_HTOD','Host-to" \
    "-Device'),(2,'CUDA_MEMCPY_KIND_DTOH','Device-to-Host'),(3,'CUDA_MEMCPY_KIND_HTOA','Host-to-Array'),(4,'CUDA_ME" \
    "MCPY_KIND_ATOH','Array-to-Host'),(5,'CUDA_MEMCPY_KIND_ATOA','Array-to-Array'),(6,'CUDA_MEMCPY_KIND_ATOD','Arra" \
    "y-to-Device'),(7,'CUDA_MEMCPY_KIND_DTOA','Device-to-Array'),(8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device'),(9," \
    "'CUDA_MEMCPY_KIND_HTOH','Host-to-Host'),(10,'CUDA_MEMCPY_KIND_PTOP','Peer-to-Peer'),(11,'CUDA_MEMCPY_KIND_UVM_" \
    "HTOD','Unified Host-to-Device'),(12,'CUDA_MEMCPY_KIND_UVM_DTOH','Unified Device-to-Host'),(13,'CUDA_MEMCPY_KIN" \
    "D_UVM_DTOD','Unified Device-to-Device');\n"

#define TG_RT_SQL_3_0_ENUM_MEM_KIND \
    "CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);\nINSERT " \
    "INTO ENUM_CUDA_MEM_KIND VALUES (0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable'),(1,'CUDA_MEMOPR_MEMORY_KIND_P" \
    "INNED','Pinned'),(2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device'),(3,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array'),(4," \
    "'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed'),(5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device " \
    "Static'),(6,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static'),(7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','U" \
    "nknown');\n"

#define TG_RT_SQL_3_0_ENUM_SYNC_TYPE \
    "CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);\nINSERT " \
    "INTO ENUM_CUPTI_SYNC_TYPE VALUES (0,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN','Unknown'),(1,'CUPTI_ACTIVIT" \
    "Y_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE','Event sync'),(2,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EV" \
    "ENT','Stream wait sync'),(3,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE','Stream " \
    "sync'),(4,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE','Context sync');\n"

#define TG_RT_SQL_3_0_ENUM_EVENT_TYPE \
    "CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);\nINSERT " \
    "INTO ENUM_NSYS_EVENT_TYPE VALUES (0,'Unknown','Unknown'),(1,'CpuCycles','CpuCycles'),(2,'Instructions','Instru" \
    "ctions'),(3,'CacheReferences','CacheReferences'),(4,'L1CacheDataWriteMisses','L1CacheDataWriteMisses'),(5,'L1C" \
    "acheDataReadMisses','L1CacheDataReadMisses'),(6,'L1CacheInstructionMisses','L1CacheInstructionMisses'),(7,'L2C" \
    "acheDataWriteMisses','L2CacheDataWriteMisses'),(8,'L2CacheDataReadMisses','L2CacheDataReadMisses'),(9,'L2Cache" \
    "InstructionMisses','L2CacheInstructionMisses'),(10,'BranchInstructions','BranchInstructions'),(11,'BranchMisse" \
    "s','BranchMisses'),(12,'BusCycles','BusCycles'),(13,'CpuClock','CpuClock'),(14,'TaskClock','TaskClock'),(15,'P" \
    "ageFault','PageFault'),(16,'ContextSwitches','ContextSwitches'),(17,'CpuMigrations','CpuMigrations'),(18,'Page" \
    "FaultsMin','PageFaultsMin'),(19,'PageFaultsMax','PageFaultsMax'),(20,'AlignmentFaults','AlignmentFaults'),(21," \
    "'EmulationFaults','EmulationFaults'),(22,'ThreadState','ThreadState'),(23,'Frames','Frames'),(24,'Annotations'" \
    ",'Annotations'),(25,'SchedSwitch','SchedSwitch'),(26,'SchedWakeup','SchedWakeup'),(27,'Command','Command'),(28" \
    ",'Mmap','Mmap'),(29,'MemUsage','MemUsage'),(30,'Emc','Emc'),(31,'Composite','Composite'),(32,'NvtxEvents','Nvt" \
    "xEvents'),(33,'NvtxCategory','NvtxCategory'),(34,'NvtxMark','NvtxMark'),(35,'NvtxPushRange','NvtxPushRange'),(" \
    "36,'NvtxPopRange','NvtxPopRange'),(37,'NvtxStartRange','NvtxStartRange'),(38,'NvtxEndRange','NvtxEndRange'),(3" \
    "9,'NvtxThread','NvtxThread'),(40,'PowerRate','PowerRate'),(41,'Sched','Sched'),(42,'CpuCyclesSelf','CpuCyclesS" \
    "elf'),(43,'CpuCyclesTotal','CpuCyclesTotal'),(44,'CpuCyclesSelfPlus','CpuCyclesSelfPlus'),(45,'Cuda','Cuda'),(" \
    "46,'CudaDevice','CudaDevice'),(47,'TraceProcess','TraceProcess'),(48,'TraceFunctions','TraceFunctions'),(49,'D" \
    "iagnostic','Diagnostic'),(50,'GlWorkload','GlWorkload'),(51,'BandwidthUsage','BandwidthUsage'),(52,'KhrDebugMa" \
    "rk','KhrDebugMark'),(53,'KhrDebugPushRange','KhrDebugPushRange'),(54,'KhrDebugPopRange','KhrDebugPopRange'),(5" \
    "5,'KhrDebugGpuMark','KhrDebugGpuMark'),(56,'KhrDebugGpuPushRange','KhrDebugGpuPushRange'),(57,'KhrDebugGpuPopR" \
    "ange','KhrDebugGpuPopRange'),(58,'GpuCtxsw','GpuCtxsw'),(59,'NvtxPushPopRange','NvtxPushPopRange'),(60,'NvtxSt" \
    "artEndRange','NvtxStartEndRange'),(61,'ProfTime','ProfTime'),(62,'KhrDebugPushPopRange','KhrDebugPushPopRange'" \
    "),(63,'KhrDebugGpuPushPopRange','KhrDebugGpuPushPopRange'),(64,'NvtxtCategory','NvtxtCategory'),(65,'NvtxtMark" \
    "','NvtxtMark'),(66,'NvtxtPushRange','NvtxtPushRange'),(67,'NvtxtPopRange','NvtxtPopRange'),(68,'NvtxtStartRang" \
    "e','NvtxtStartRange'),(69,'NvtxtEndRange','NvtxtEndRange'),(70,'NvtxtPushPopRange','NvtxtPushPopRange'),(71,'N" \
    "vtxtStartEndRange','NvtxtStartEndRange'),(72,'NvtxtMetaThread','NvtxtMetaThread'),(73,'NvtxtMetaProcess','Nvtx" \
    "tMetaProcess'),(74,'NvtxtMetaFileDisplay','NvtxtMetaFileDisplay'),(75,'NvtxDomainCreate','NvtxDomainCreate'),(" \
    "76,'NvtxDomainDestroy','NvtxDomainDestroy'),(77,'NvnGpuCmdBuf','NvnGpuCmdBuf'),(78,'TraceVSync','TraceVSync')," \
    "(79,'CudaDeviceKernel','CudaDeviceKernel'),(80,'CudaDeviceMemory','CudaDeviceMemory'),(81,'Pmu','Pmu'),(82,'Nv" \
    "nGpuDraw','NvnGpuDraw'),(83,'NvnGpuCompute','NvnGpuCompute'),(84,'NvnGpuDebug','NvnGpuDebug'),(85,'OS " \
    "runtime libraries','OS runtime libraries'),(86,'CuDNN','CuDNN'),(87,'CuBLAS','CuBLAS'),(88,'NvMedia','NvMedia'" \
    "),(89,'OpenACC','OpenACC'),(90,'Correlation','Correlation'),(91,'DX12','DX12'),(92,'DX12Workload','DX12Workloa" \
    "d'),(93,'PmuRawEvent','PmuRawEvent'),(94,'GraphicsFrame','GraphicsFrame'),(95,'Vulkan','Vulkan'),(96,'VulkanWo" \
    "rkload','VulkanWorkload'),(97,'NvtxNameCudaDevice','NvtxNameCudaDevice'),(98,'NvtxNameCudaContext','NvtxNameCu" \
    "daContext'),(99,'NvtxNameCudaStream','NvtxNameCudaStream'),(100,'SystemEvent','SystemEvent'),(101,'GpuMemoryEv" \
    "ent','GpuMemoryEvent'),(102,'DX12CreateObject','DX12CreateObject'),(103,'VulkanCreateObject','VulkanCreateObje" \
    "ct'),(104,'UnitTraceEvent','UnitTraceEvent'),(105,'CustomETWEvent','CustomETWEvent'),(106,'CudaSyncEvent','Cud" \
    "aSyncEvent'),(107,'SLIEvent','SLIEvent'),(108,'CudaBacktrace','CudaBacktrace'),(109,'WddmEvent','WddmEvent'),(" \
    "110,'DX11','DX11'),(111,'DX11CreateObject','DX11CreateObject'),(112,'DXGI','DXGI'),(113,'CudaGraphNodeCreation" \
    "','CudaGraphNodeCreation'),(114,'OpenMP','OpenMP'),(115,'UncorePmuEvent','UncorePmuEvent'),(116,'UncorePmuCarm" \
    "el','UncorePmuCarmel'),(117,'CudaDeviceMemoryUsage','CudaDeviceMemoryUsage'),(118,'ETWDxgKrnlEvent','ETWDxgKrn" \
    "lEvent'),(119,'CudaUvmCpuPageFaultEvent','CudaUvmCpuPageFaultEvent'),(120,'CudaUvmGpuPageFaultEvent','CudaUvmG" \
    "puPageFaultEvent'),(121,'NICMetricsValuesEvent','NICMetricsValuesEvent'),(122,'NICMetricsListEvent','NICMetric" \
    "sListEvent'),(123,'InterruptHandler','InterruptHandler'),(124,'NVENC','NVENC'),(125,'NVDEC','NVDEC'),(126,'nvJ" \
    "PEG','nvJPEG'),(127,'CudaEventRecord','CudaEventRecord'),(128,'PerfEventCountEvent','PerfEventCountEvent'),(12" \
    "9,'CudaDeviceMemoryPool','CudaDeviceMemoryPool'),(130,'CudaDeviceGraph','CudaDeviceGraph'),(131,'CudaGraphExec" \
    "Creation','CudaGraphExecCreation'),(132,'CudaGraphCreation','CudaGraphCreation'),(133,'CudaGraphClone','CudaGr" \
    "aphClone');\n"

#define TG_RT_SQL_3_0_META_ROWS \
    "INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_NAME','NVIDIA Nsight Systems'),('EXPORT_PRODUCT_VERSION'," \
    "'2022.4.2.1'),('EXPORT_PRODUCT_DATE','2022.4'),('EXPORT_SCHEMA_VERSION','3.0.0'),('EXPORT_SCHEMA_VERSION_MAJOR" \
    "','3'),('EXPORT_SCHEMA_VERSION_MINOR','0'),('EXPORT_SCHEMA_VERSION_MICRO','0');\n"

/* Everything above, in the order of a real export. */
#define TG_RT_SQL_3_0_ALL \
    TG_RT_SQL_3_0_META_TABLE \
    TG_RT_SQL_3_0_STRING_IDS \
    TG_RT_SQL_3_0_KERNEL \
    TG_RT_SQL_3_0_MEMCPY \
    TG_RT_SQL_3_0_MEMSET \
    TG_RT_SQL_3_0_RUNTIME \
    TG_RT_SQL_3_0_SYNC \
    TG_RT_SQL_3_0_NVTX \
    TG_RT_SQL_3_0_GPU \
    TG_RT_SQL_3_0_OVERHEAD \
    TG_RT_SQL_3_0_PROCESSES \
    TG_RT_SQL_3_0_THREAD_NAMES \
    TG_RT_SQL_3_0_OSRT \
    TG_RT_SQL_3_0_OSRT_CALLCHAINS \
    TG_RT_SQL_3_0_CUDA_CALLCHAINS \
    TG_RT_SQL_3_0_CUDNN \
    TG_RT_SQL_3_0_CUBLAS \
    TG_RT_SQL_3_0_SESSION_START \
    TG_RT_SQL_3_0_ENUM_MEMCPY_OPER \
    TG_RT_SQL_3_0_ENUM_MEM_KIND \
    TG_RT_SQL_3_0_ENUM_SYNC_TYPE \
    TG_RT_SQL_3_0_ENUM_EVENT_TYPE \
    TG_RT_SQL_3_0_META_ROWS

#endif
