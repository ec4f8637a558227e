# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Failure signature catalog for NCCL / nccl-tests / launcher logs (data only).

Each entry names one failure signature that ``_nccl_signatures.py`` looks for, line by line:

* ``id``: stable identifier, used by ``level_assert`` and in reports;
* ``sources``: where the text comes from: repository, file:line and version of the code that prints it
  (NVIDIA/nccl, NVIDIA/nccl-tests, aws-ofi-nccl, nccl-rdma-sharp-plugins, PyTorch), see docs/verdicts.md;
* ``meaning``: one sentence, what the signature says happened;
* ``hint``: one or two sentences of remediation;
* ``patterns``: regular expressions (``re.search`` on the decoded line, case-sensitive);
* ``triggers``: plain substrings; a line is only tried against ``patterns`` when it
  contains one of them (cheap prefilter, so it must be implied by every pattern).

Two ids are not driven by ``patterns`` alone: ``wrong_results`` is also raised by the
table parser (a row whose ``#wrong`` count is > 0, or an ``Out of bounds values : N FAILED``
footer) and ``socket_fallback`` is decided at the end of the log (``Using network Socket``
after evidence that a plugin/OFI/IB network was attempted).

Sources: the printing code of NCCL 2.21-2.30 (``ncclGetErrorString`` for every ``ncclResult_t``,
the WARN lines before them), PyTorch's ProcessGroupNCCL, aws-ofi-nccl 1.14-1.21, libfabric's EFA
provider 1.22-2.6 and NVIDIA's nccl-rdma-sharp-plugins (each entry's ``sources``); the seed repository's EFA troubleshooting table;
the public logs in tests/unit/fixtures/nccl (see SOURCES.md there). ``RESULT_CODES`` maps every
``ncclResult_t`` to its signature (a unit test walks NCCL's own enum against it).
Standard library only; keep it importable on Python 3.8.
"""

from __future__ import annotations

CATALOG = (
    {
        "id": "segfault",
        "sources": (
            'not NCCL: the UCX crash handler\'s "Caught signal 11 (Segmentation fault: ...)" (openucx/ucx '
            'src/ucs/debug/debug.c, not fetched here) as in the real log of NVIDIA/nccl#1419; Open MPI\'s '
            '"Signal: Segmentation fault (11)", "died from signal 11"',
        ),
        "meaning": "A process crashed with a segmentation fault (SIGSEGV, 'Caught signal 11').",
        "hint": (
            "On EFA instances the usual cause is the efa_nv_peermem (or nvidia_peermem) kernel module not being "
            "loaded: check 'lsmod | grep peermem' on every node; otherwise read the backtrace that follows "
            "for the library that crashed (NCCL, the net plugin, UCX)."
        ),
        "patterns": (
            r"Caught signal 11\b",
            r"Segmentation fault",
            r"SIGSEGV",
            r"signal 11 \(",
            r"died from signal 11\b",
        ),
        "triggers": ("ignal 11", "Segmentation", "SIGSEGV"),
    },
    {
        "id": "process_aborted",
        "sources": (
            'not NCCL: the shell\'s "Aborted (core dumped)", libstdc++ "terminate called after throwing" (as in the real log '
            'pytorch-watchdog-timeout-broadcast-2rank-deepspeed.log); UCX "==== backtrace (tid:"',
        ),
        "meaning": "A process aborted: SIGABRT, an uncaught C++ exception ('terminate called') or a UCX crash dump.",
        "hint": (
            "Read the lines just before it for the NCCL/CUDA/network error that triggered the abort; "
            "a UCX '==== backtrace' dump usually follows a 'Caught signal' line naming the signal."
        ),
        "patterns": (
            r"Aborted \(core dumped\)",
            r"terminate called after throwing",
            r"terminate called without an active exception",
            r"SIGABRT",
            r"Caught signal 6\b",
            r"Signal: Aborted",
            r"==== backtrace \(tid:",
            r"died from signal 6\b",
        ),
        "triggers": ("Abort", "terminate called", "SIGABRT", "ignal 6", "==== backtrace"),
    },
    {
        "id": "efa_cm_error",
        "sources": (
            'aws-ofi-nccl src/nccl_ofi_rdma.cpp (v1.14.0..v1.21.1) NCCL_OFI_WARN of the failed request, with '
            'libfabric efa prov_errno 4126 text "Unresponsive receiver"',
        ),
        "meaning": "An EFA connection handshake failed (cm_req_handle_error_entry / 'Unresponsive receiver').",
        "hint": (
            "Known with libfabric 1.22 from EFA installer 1.34/1.38: upgrade the EFA installer and aws-ofi-nccl "
            "in the image; also check that the peer process is still alive and that the security group allows "
            "all traffic to and from itself."
        ),
        "patterns": (
            r"cm_req_handle_error_entry",
            r"Unresponsive receiver",
        ),
        "triggers": ("cm_req_handle", "Unresponsive"),
    },
    {
        "id": "nccl_warn",
        "sources": (
            'NVIDIA/nccl src/debug.cc ncclDebugLog (v2.21.5-1..v2.30.7-1): "%s:%d:%d [%d] %s:%d NCCL WARN " '
            'frame of every WARN()',
        ),
        "meaning": "NCCL printed a warning (NCCL WARN): something in initialisation or transport went wrong.",
        "hint": (
            "The WARN text names the failing subsystem (NET/OFI, NET/IB, socket, CUDA); treat the node as suspect "
            "until it is explained (other health checks escalate NCCL WARN to node isolation)."
        ),
        "patterns": (r"NCCL WARN",),
        "triggers": ("NCCL WARN",),
    },
    {
        "id": "unhandled_system_error",
        "sources": (
            'NVIDIA/nccl src/init.cc:2683 ncclGetErrorString (v2.28.9-1; :2257 in v2.21.5-1, :3415 in v2.30.7-1) '
            '"unhandled system error (run with NCCL_DEBUG=INFO for details)"',
            'NVIDIA/nccl src/include/checks.h:45 SYSCHECK (v2.28.9-1) WARN("Call to " name " failed: %s")',
            'pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp getNcclErrorDetailStr (commit 0323141f) '
            '"ncclSystemError: '
            'System call (e.g. socket, malloc) ..."',
        ),
        "meaning": "A system call or network operation failed inside NCCL (ncclSystemError).",
        "hint": (
            "Check the NICs / EFA devices, 'ulimit -l' (should be unlimited), /dev/shm size and hugepages, then rerun "
            "with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see the failing call."
        ),
        "patterns": (r"unhandled system error", r"ncclSystemError", r"NCCL WARN Call to \w+ failed"),
        "triggers": ("system error", "SystemError", "Call to "),
    },
    {
        "id": "unhandled_cuda_error",
        "sources": (
            'NVIDIA/nccl src/init.cc:2683 ncclGetErrorString (v2.28.9-1) "unhandled cuda error (run with '
            'NCCL_DEBUG=INFO for details)"',
            'NVIDIA/nccl src/include/checks.h:16 CUDACHECK (v2.28.9-1) WARN("Cuda failure \'%s\'"); '
            'src/include/cudawrap.h:34 WARN("Cuda failure %d \'%s\'")',
        ),
        "meaning": "A CUDA call failed inside NCCL (ncclUnhandledCudaError).",
        "hint": (
            "Check 'nvidia-smi' and dmesg for Xid errors, the driver/CUDA versions of the image, and GPU memory "
            "(sizes too large for the GPU); rerun with NCCL_DEBUG=INFO for the failing call."
        ),
        "patterns": (r"unhandled cuda error", r"ncclUnhandledCudaError", r"NCCL WARN Cuda failure (?:\d+ )?'"),
        "triggers": ("cuda error", "CudaError", "Cuda failure"),
    },
    {
        "id": "internal_error",
        "sources": (
            'NVIDIA/nccl src/init.cc:2683 ncclGetErrorString (v2.28.9-1) "internal error - please report this '
            'issue to the NCCL developers"',
            'pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp getNcclErrorDetailStr (commit 0323141f) '
            '"ncclInternalError: '
            'Internal check failed."',
        ),
        "meaning": "NCCL reported an internal error (ncclInternalError).",
        "hint": (
            "Usually mismatched versions: NCCL vs the net plugin (aws-ofi-nccl) vs libfabric, or different NCCL "
            "versions on different ranks; align the versions in the image."
        ),
        "patterns": (r"internal error - please report", r"ncclInternalError"),
        "triggers": ("internal error", "InternalError"),
    },
    {
        "id": "test_failure",
        "sources": (
            'NVIDIA/nccl-tests src/common.h:34,47,61,86 (v2.19.6) "%s: Test CUDA failure %s:%d \'%s\'", "%s: '
            'Test NCCL failure %s:%d \'%s\'", " .. %s pid %d: Test failure %s:%d"',
        ),
        "meaning": "nccl-tests stopped on an error ('Test failure', 'Test NCCL failure', 'Test CUDA failure').",
        "hint": (
            "The same line names the NCCL or CUDA error; the results table of this run is incomplete, "
            "so its bandwidth numbers must not be used."
        ),
        "patterns": (r"Test (?:NCCL |CUDA )?failure",),
        "triggers": ("failure",),
    },
    {
        "id": "wrong_results",
        "sources": (
            'NVIDIA/nccl-tests src/util.cu:777 (v2.19.6) PRINT("# %-20s : %d %s", "Out of bounds values", ...) '
            'and the #wrong column',
        ),
        "meaning": "nccl-tests found corrupted results: a '#wrong' count > 0 or 'Out of bounds values : N FAILED'.",
        "hint": (
            "Data was corrupted between GPUs: suspect a faulty GPU, NVLink, NIC or GPUDirect RDMA setup; run DCGM "
            "diagnostics (dcgmi diag -r 2) and pairwise tests to find the node."
        ),
        "patterns": (r"Out of bounds values\s*:\s*[0-9]+\s+FAILED",),
        "triggers": ("FAILED",),
    },
    {
        "id": "watchdog_timeout",
        "sources": (
            'pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:629 as printed by the torch 2.5 build '
            'of the real log pytorch-watchdog-timeout-broadcast-2rank-deepspeed.log: "[Rank %d] Watchdog caught '
            'collective operation timeout: WorkNCCL(...) ran for %d milliseconds before timing out.", with and '
            'without the "[rank%d]:" prefix torch puts before its C++ log lines',
        ),
        "meaning": "PyTorch's NCCL watchdog timed out a collective (a rank hung or the network stalled).",
        "hint": (
            "Find the first NCCL WARN or error of each rank; common causes are a dead peer, a wrong "
            "NCCL_SOCKET_IFNAME, or an EFA/IB failure. TORCH_NCCL_TRACE_BUFFER_SIZE enables the flight recorder."
        ),
        "patterns": (
            r"Watchdog caught collective operation timeout",
            r"watchdog got stuck",
            r"failure detected by watchdog",
            r"Heartbeat monitor timed out",
        ),
        "triggers": ("atchdog", "Heartbeat monitor"),
    },
    {
        "id": "mpi_abnormal_exit",
        "sources": (
            'Open MPI / PRRTE help text ("mpirun detected that one or more processes exited with non-zero '
            'status", "Primary job  terminated normally") as in the real log of NVIDIA/nccl-tests#219; Slurm '
            'srun "exited with exit code"',
        ),
        "meaning": "The launcher (mpirun, srun, Cray PALS) reports that a rank exited with a non-zero status or was killed.",
        "hint": (
            "The failing rank's own output above has the cause; on Kubernetes MPIJobs also check that the "
            "launcher did not start before all workers were ready."
        ),
        "patterns": (
            r"(?:mpirun|mpiexec|prterun|prte) (?:detected|noticed) that",
            r"Primary job\s+terminated normally, but",
            r"MPI_ABORT was invoked",
            r"has exited due to process rank",
            r"ORTE has lost communication",
            r"srun: error: .*[Ee]xited with exit code",
            r"rank \d+ died from signal \d+",
        ),
        "triggers": ("detected that", "noticed that", "terminated normally", "MPI_ABORT", "exited due to",
                     "lost communication", "xited with exit code", "died from signal"),
    },
    {
        "id": "ofi_init_failed",
        "sources": (
            'aws-ofi-nccl src/nccl_ofi_net.cpp:418 (v1.21.1; src/nccl_ofi_net.c:335 in v1.14.0) '
            'NCCL_OFI_WARN(PACKAGE_NAME " initialization failed")',
        ),
        "meaning": "The aws-ofi-nccl (NET/OFI) plugin failed to initialise, so NCCL cannot use EFA/libfabric.",
        "hint": (
            "Check that EFA devices are given to the pod (vpc.amazonaws.com/efa), that 'fi_info -p efa' works, "
            "that FI_PROVIDER and FI_EFA_USE_DEVICE_RDMA fit the instance type (RDMA only on p4d/p4de/p5*/p6), and "
            "that the libfabric and aws-ofi-nccl versions match."
        ),
        # aws-ofi-nccl 1.14+ (src/nccl_ofi_net.cpp, v1.14.0 .. v1.21.x): NCCL_OFI_WARN(PACKAGE_NAME
        # " initialization failed") prints "NET/OFI aws-ofi-nccl initialization failed".
        "patterns": (
            r"NET/OFI.*(?:initialization failed|[Ii]nitializing plugin failed|Failed to initialize)",
            r"initNet\(\) failed",
            r"No eligible providers",
            r"find any optimal provider",
            r"fi_getinfo.*(?:output empty list|failed)",
        ),
        "triggers": ("initialization failed", "nitializing plugin failed", "Failed to initialize", "initNet",
                     "eligible providers", "optimal provider", "fi_getinfo"),
    },
    {
        "id": "ofi_av_error",
        "sources": (
            'aws-ofi-nccl src/nccl_ofi_ofiutils.cpp:428 (v1.21.1; src/nccl_ofi_ofiutils.c:255 in v1.14.0) '
            'NCCL_OFI_WARN("Couldn\'t open AV. RC: %d, ERROR: %s")',
        ),
        "meaning": "aws-ofi-nccl could not open the libfabric address vector ('NET/OFI Couldn't open AV').",
        "hint": (
            "The EFA device refused to create endpoint resources: read dmesg on the node for efa errors "
            "(e.g. 'Failed to allocate pd'), check that the pod got its EFA devices and 'ulimit -l' unlimited, "
            "and that the EFA driver, libfabric and aws-ofi-nccl versions belong together; replace the node "
            "when it persists."
        ),
        # aws-ofi-nccl src/nccl_ofi_ofiutils.cpp (v1.14.0 .. v1.21.x):
        # NCCL_OFI_WARN("Couldn't open AV. RC: %d, ERROR: %s", ...); the same text since v1.0.
        "patterns": (r"Couldn't open AV\b",),
        "triggers": ("open AV",),
    },
    {
        "id": "ofi_libfabric_too_old",
        "sources": (
            'aws-ofi-nccl src/nccl_ofi_net.cpp:651 (v1.21.1; src/nccl_ofi_net.c:612 in v1.14.0) '
            'NCCL_OFI_WARN("EFA provider requires at least libfabric version 1.22.0.")',
        ),
        "meaning": "aws-ofi-nccl refused the efa provider because libfabric is older than 1.22.0.",
        "hint": (
            "The image's libfabric is too old for its aws-ofi-nccl: install a current EFA installer in the image "
            "(it ships libfabric and aws-ofi-nccl together) or put /opt/amazon/efa/lib first in LD_LIBRARY_PATH "
            "so an older system libfabric is not picked up."
        ),
        # aws-ofi-nccl src/nccl_ofi_net.cpp nccl_net_ofi_query_provider_capabilities (v1.14.0 .. v1.21.x):
        # NCCL_OFI_WARN("EFA provider requires at least libfabric version 1.22.0.")
        "patterns": (r"requires at least libfabric version",),
        "triggers": ("at least libfabric",),
    },
    {
        "id": "ib_fatal",
        "sources": (
            'NVIDIA/nccl src/transport/net_ib.cc:219-236 (v2.28.9-1) WARN("NET/IB : %s:%d async fatal event '
            '...") and :2543 WARN("NET/IB: Got completion from peer %s with status=...")',
            'Mellanox/nccl-rdma-sharp-plugins src/ib_plugin.c:57 (v2.1.0) WARN("NET/IB : Got async event : %s"), '
            ':670 WARN("NET/IB : Got completion with error %d, ...")',
        ),
        "meaning": "InfiniBand/RoCE reported a fatal event (async event, completion error or QP failure).",
        "hint": (
            "Check 'ibstat' / link state, cables and switch ports, NCCL_IB_GID_INDEX on RoCE and the NIC "
            "firmware; the node is a candidate for isolation."
        ),
        # NCCL 2.23+ src/transport/net_ib.cc (2.30: net_ib/common.cc) ncclIbAsyncThreadMain:
        # WARN("NET/IB : %s:%d async fatal event on QP (%p): %s") (also ": %s", "on CQ", "on SRQ").
        "patterns": (
            r"NET/IB\s*:\s*Got (?:async event|completion)",
            r"NET/IB\s*:.*async fatal event",
            r"catastrophic error",
            r"IBV_WC_(?:RETRY_EXC|REM_|LOC_|WR_FLUSH)",
            r"ibv_(?:modify|create)_qp failed",
            r"transport retry counter exceeded",
        ),
        "triggers": ("Got async", "Got completion", "async fatal", "catastrophic", "IBV_WC_", "_qp failed",
                     "retry counter"),
    },
    {
        "id": "cuda_device_busy",
        "sources": (
            'CUDA runtime cudaGetErrorString(cudaErrorDevicesUnavailable): "all CUDA-capable devices are busy or '
            'unavailable" (CUDA 11), "CUDA-capable device(s) is/are busy or unavailable" (CUDA 12), printed through '
            'NVIDIA/nccl src/include/checks.h:16,24 (v2.28.9-1) WARN("Cuda failure \'%s\'")',
        ),
        "meaning": "A GPU was busy or unavailable (another process holds it, or exclusive compute mode).",
        "hint": (
            "Look for leftover processes in 'nvidia-smi' (run each level in its own pod) and check the compute "
            "mode; a GPU stuck after an Xid needs a reset or a node reboot."
        ),
        "patterns": (r"busy or unavailable", r"cudaErrorDevicesUnavailable"),
        "triggers": ("busy or unavailable", "DevicesUnavailable"),
    },
    {
        "id": "reg_mr_error",
        "sources": (
            'aws-ofi-nccl src/nccl_ofi_rdma.cpp / nccl_ofi_sendrecv.cpp (v1.14.0..v1.21.1) NCCL_OFI_WARN("Unable '
            'to register memory (type = %d) for device %d. RC: %d, Error: %s")',
            'NVIDIA/nccl src/misc/ibvwrap.cc (v2.28.9-1) "Call to ibv_reg_mr failed"',
        ),
        "meaning": "Registering memory with the NIC failed (REG_MR / 'Unable to register memory').",
        "hint": (
            "On EFA, err -22 is a known libfabric issue before EFA installer 1.29.1 (upgrade, or set "
            "FI_EFA_SET_CUDA_SYNC_MEMOPS=0) and, per the seed runbook, a missing egress self-referencing "
            "security-group rule; RC 12 'Cannot allocate memory' means 'ulimit -l' is too low."
        ),
        "patterns": (
            r"REG_MR",
            r"Unable to register memory",
            r"ibv_reg_mr\w* failed",
            r"fi_mr_reg\w*.*failed",
        ),
        "triggers": ("REG_MR", "register memory", "ibv_reg_mr", "fi_mr_reg"),
    },
    {
        # Not reg_mr_error: libfabric itself prints it to stderr and abort()s (no NCCL WARN, no aws-ofi-nccl
        # line), when growing its RX packet pool (fi_mr_reg of each chunk) or posting it fails.
        "id": "efa_rx_buf_post",
        "sources": (
            'ofiwg/libfabric prov/efa/src/efa_base_ep.c:480-484 efa_base_ep_write_eq_error (v2.1.0; :743 in '
            'v2.6.0, :438 in v1.22.0) fprintf(stderr, "Libfabric EFA provider has encountered an internal '
            'error:\\n\\nLibfabric error: (%zd) %s\\nEFA internal error: (%zd) %s\\n\\nYour application will now '
            'abort().\\n") when the error cannot be written to an EQ',
            'ofiwg/libfabric prov/efa/src/rdm/efa_rdm_ep_utils.c:889 (v2.1.0; :981 in v2.6.0) '
            'efa_base_ep_write_eq_error(..., FI_EFA_ERR_INTERNAL_RX_BUF_POST); prov/efa/src/efa_errno.h:96 (v2.1.0) '
            '_(4112, INTERNAL_RX_BUF_POST, Failure to post internal receive buffers)',
        ),
        "meaning": (
            "The EFA provider (libfabric) could not register or post its internal receive buffers and aborted the "
            "rank; with 'Libfabric error: (-12) Cannot allocate memory' the container's locked-memory limit "
            "(RLIMIT_MEMLOCK, 'ulimit -l') is too low for the buffers it pins."
        ),
        "hint": (
            "Raise memlock to unlimited on the node: on AL2023 an RLIMIT_MEMLOCK entry in the NodeConfig's "
            "containerd baseRuntimeSpec (nodeadm), Bottlerocket sets it when an EFA device is attached; then re-run "
            "L0's efa_memlock check. If the limit is already unlimited, upgrade the EFA installer (libfabric)."
        ),
        # EFA internal error code 4112 (efa_errno.h) and its text, also in libfabric's own
        # "Writing error to EQ: ... prov_errno: Failure to post internal receive buffers (4112)" warning.
        "patterns": (
            r"EFA internal error: \(4112\)",
            r"Failure to post internal receive buffers",
        ),
        "triggers": ("EFA internal error: (4112)", "internal receive buffers"),
    },
    {
        "id": "socket_fallback",
        "sources": (
            'NVIDIA/nccl src/init.cc (v2.21.5-1..v2.30.7-1) INFO "Using network %s" with the built-in Socket '
            'transport name "Socket" (src/transport/net_socket.cc)',
        ),
        "meaning": (
            "NCCL uses TCP sockets although a plugin/OFI/IB network was attempted: traffic between nodes "
            "goes over TCP (about 3 GB/s instead of hundreds)."
        ),
        "hint": (
            "Usually aws-ofi-nccl is missing from the image (NGC images ship HPC-X verbs, not libfabric) or failed "
            "to initialise (see ofi_init_failed); set NCCL_NET explicitly (e.g. NCCL_NET=ofi) so that a broken "
            "plugin fails the run instead of silently falling back."
        ),
        # Decided by _nccl_signatures.py from 'Using network Socket' plus earlier evidence; no line patterns.
        "patterns": (),
        "triggers": (),
    },
    # ---- the rest of ncclResult_t (src/nccl.h.in), as ncclGetErrorString and PyTorch print them ----
    {
        "id": "invalid_argument",
        "sources": (
            'NVIDIA/nccl src/init.cc:2683 ncclGetErrorString (v2.28.9-1; :2257 v2.21.5-1, :3415 v2.30.7-1) '
            '"invalid argument (run with NCCL_DEBUG=WARN for details)"',
            'NVIDIA/nccl src/misc/argcheck.cc:14,30,48 (v2.28.9-1) WARN("%s : %s %p is not a valid pointer"), '
            'WARN("%s : %s argument is NULL"), WARN("%s : invalid root %d (root should be in the 0..%d range)")',
            'pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp getNcclErrorDetailStr (commit 0323141f) '
            '"ncclInvalidArgument: Invalid value for an argument."',
        ),
        "meaning": "NCCL refused a call's arguments (ncclInvalidArgument): a NULL or non-device buffer, a bad root, count or type.",
        "hint": (
            "A bug in the calling program, not in the cluster: the WARN line before it names the collective and the "
            "argument (for example 'Broadcast : sendbuff (nil) is not a valid pointer'); fix the call or the framework version."
        ),
        "patterns": (
            r"invalid argument \(run with NCCL_DEBUG",
            r"ncclInvalidArgument",
            r"NCCL [Ee]rror(?: in: \S+,| \d+:) invalid argument",
            r" : invalid root -?\d+ \(root should be",
            r" is not a valid pointer",
            r" argument is NULL",
        ),
        "triggers": ("invalid argument", "InvalidArgument", "invalid root", "valid pointer", "argument is NULL"),
    },
    {
        "id": "invalid_usage",
        "sources": (
            'NVIDIA/nccl src/init.cc:2683 ncclGetErrorString (v2.28.9-1) "invalid usage (run with '
            'NCCL_DEBUG=WARN for details)"',
            'NVIDIA/nccl src/init.cc:904 (v2.28.9-1) WARN("Duplicate GPU detected : rank %d and rank %d both on '
            'CUDA device %lx")',
            'pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp getNcclErrorDetailStr (commit 0323141f) '
            '"ncclInvalidUsage: This usually reflects invalid usage of NCCL library."',
        ),
        "meaning": "NCCL was used in a way it does not allow (ncclInvalidUsage), most often two ranks on one GPU ('Duplicate GPU detected').",
        "hint": (
            "Give every rank its own GPU: check that LOCAL_RANK selects the device (torch.cuda.set_device) and that the "
            "pod's GPU limit equals the processes per pod; the WARN line before it says which ranks share a device."
        ),
        "patterns": (r"invalid usage", r"ncclInvalidUsage", r"Duplicate GPU detected"),
        "triggers": ("invalid usage", "InvalidUsage", "Duplicate GPU"),
    },
    {
        "id": "remote_error",
        "sources": (
            'NVIDIA/nccl src/init.cc:2683 ncclGetErrorString (v2.28.9-1) "remote process exited or there was a '
            'network error"',
            'pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp getNcclErrorDetailStr (commit 0323141f) '
            '"ncclRemoteError: A call failed possibly due to a network error or a remote process exiting '
            'prematurely."',
        ),
        "meaning": "A peer process exited or the network between ranks failed (ncclRemoteError).",
        "hint": (
            "Find the rank that died first (its own log has the real error, often an OOM kill or a crash) or the NIC "
            "that failed (NET/IB or NET/OFI WARN lines, 'Connection closed by remote peer'); the others only report it."
        ),
        "patterns": (r"remote process exited or there was a network error", r"ncclRemoteError"),
        "triggers": ("remote process exited", "RemoteError"),
    },
    {
        "id": "in_progress",
        "sources": (
            'NVIDIA/nccl src/init.cc:2683 ncclGetErrorString (v2.28.9-1) "NCCL operation in progress"',
            'NVIDIA/nccl src/init.cc:381 (v2.28.9-1) WARN("Attempt to use communicator before the previous operation '
            'returned ncclSuccess")',
        ),
        "meaning": "A non-blocking communicator was used while an operation was still in progress (ncclInProgress).",
        "hint": (
            "With non-blocking communicators (TORCH_NCCL_USE_COMM_NONBLOCKING=1, config.blocking=0) poll "
            "ncclCommGetAsyncError until it leaves ncclInProgress; otherwise unset the variable and rerun."
        ),
        "patterns": (r"NCCL operation in progress", r"ncclInProgress",
                     r"Attempt to use communicator before the previous operation"),
        "triggers": ("operation in progress", "InProgress", "Attempt to use communicator"),
    },
    {
        "id": "nccl_timeout",
        "sources": (
            'NVIDIA/nccl src/nccl.h.in:52 (v2.30.7-1, new in 2.30) ncclTimeout = 8; src/init.cc:3433 '
            'ncclGetErrorString "timeout"',
        ),
        "meaning": "An NCCL call gave up waiting (ncclTimeout, NCCL 2.30+), for example a device-side barrier.",
        "hint": (
            "A peer did not arrive in time: look for a rank that died or stalled (its own log), then for network "
            "errors on its node; raise the timeout only when the run is known to be healthy but slow."
        ),
        "patterns": (r"ncclTimeout", r"Test NCCL failure \S+ 'timeout", r"NCCL error in: \S+, timeout\b",
                     r"NCCL error: timeout\b"),
        "triggers": ("ncclTimeout", "'timeout", ", timeout", "error: timeout"),
    },
    # ---- asynchronous errors and communicator aborts ----
    {
        "id": "nccl_async_error",
        "sources": (
            'NVIDIA/nccl src/proxy.cc:1698 (v2.28.9-1) WARN("[Service thread] Error encountered progressing '
            'operation=%s, res=%d, closing connection")',
            'NVIDIA/nccl src/proxy.cc:1734 (v2.28.9-1) WARN("[Proxy Service %d] Failed to execute operation %s from '
            'rank %d, retcode %d")',
            'NVIDIA/nccl src/proxy.cc:1300 (v2.28.9-1) WARN("Socket recv failed while polling for opId=%p")',
            'NVIDIA/nccl src/init.cc:2348 (v2.28.9-1) WARN("commReclaim: cleanup comm %p rank %d failed in '
            'destroy/abort, error %d")',
        ),
        "meaning": "NCCL's proxy or service thread hit an error in the background; it becomes the communicator's async error.",
        "hint": (
            "The retcode/res is an ncclResult_t (2 system, 3 internal, 6 remote): read the WARN line just before it "
            "for the failing socket or NIC, and check that every rank runs the same NCCL version."
        ),
        "patterns": (
            r"\[Service thread\] Error encountered progressing",
            r"\[Proxy Service \d+\] Failed to execute operation",
            r"Socket recv failed while polling",
            r"commReclaim: cleanup comm",
        ),
        "triggers": ("Error encountered progressing", "Failed to execute operation", "recv failed while polling",
                     "commReclaim"),
    },
    {
        "id": "comm_aborted",
        "sources": (
            'pytorch/pytorch torch/csrc/distributed/c10d/NCCLUtils.cpp:33 NCCLComm::getNcclComm (commit 0323141f) '
            '"NCCL communicator was aborted on rank "',
            'pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:681,695,1895 as printed by the torch 2.5 '
            'build of the real log pytorch-watchdog-timeout-broadcast-2rank-deepspeed.log: "Some NCCL operations have '
            'failed or timed out", "To avoid data inconsistency, we are taking the entire process down.", "Process '
            'group watchdog thread terminated with exception" (torch <= 2.2: "NCCL watchdog thread terminated with '
            'exception")',
        ),
        "meaning": "PyTorch's ProcessGroupNCCL aborted its NCCL communicator after an error or timeout and takes the process down.",
        "hint": (
            "The abort is the consequence: the cause is the first watchdog timeout or NCCL error of any rank "
            "(see the other signatures and the rank that failed first); TORCH_NCCL_ASYNC_ERROR_HANDLING controls it."
        ),
        "patterns": (
            r"NCCL communicator was aborted on rank",
            r"(?:Process group|NCCL) watchdog thread terminated with exception",
            r"Some NCCL operations have failed or timed out",
            r"taking the entire process down",
        ),
        "triggers": ("aborted on rank", "thread terminated with exception", "failed or timed out", "entire process down"),
    },
    # ---- network transports and plugins ----
    {
        "id": "socket_error",
        "sources": (
            'NVIDIA/nccl src/misc/socket.cc:46,71,538,596 (v2.28.9-1) WARN("socketProgressOpt: Call to %s %s '
            'failed : %s"), '
            'WARN("socketProgress: Connection closed by remote peer %s"), WARN("socketFinalizeAccept from %s: '
            'wrong type '
            '%d != %d"), WARN("%s: connect to %s failed : %s")',
            'NVIDIA/nccl src/transport/net_socket.cc:60,266,565 (v2.28.9-1) WARN("NET/Socket : no interface found"), '
            'WARN("NET/Socket : socket progress error"), WARN("NET/Socket : peer %s message truncated ...")',
        ),
        "meaning": "A TCP socket of NCCL (bootstrap, proxy or the Socket transport) failed: peer closed, connect failed or a stray connection.",
        "hint": (
            "Set NCCL_SOCKET_IFNAME to the interface the pods share, check that the peer is still alive and that "
            "nothing else (a scanner, another job) connects to NCCL's ports; 'wrong type' means a foreign connection."
        ),
        "patterns": (
            r"socketProgress(?:Opt)?: (?:Connection closed by remote peer|Call to)",
            r"socketFinalizeAccept(?: from \S+)?: wrong type",
            r"NET/Socket : (?:socket progress error|peer \S+ message truncated|no interface found|unable to allocate)",
            r"socketTryAccept: (?:Accept failed|exceeded)",
            r"socketPollConnect to \S+ failed",
            r"\w+: [Cc]onnect to \S+ (?:failed :|returned \S+, exceeded)",
        ),
        "triggers": ("socketProgress", "socketFinalizeAccept", "NET/Socket : ", "socketTryAccept", "socketPollConnect",
                     "onnect to "),
    },
    {
        "id": "ofi_completion_error",
        "sources": (
            'aws-ofi-nccl src/platform-aws.cpp:1047 (v1.21.1) NCCL_OFI_WARN("Request %p (%s) completed with error: '
            'err: %d, flags: %ld, prov_errno: %d, strerror: %s, len: %ld")',
            'aws-ofi-nccl src/nccl_ofi_rdma.cpp:1342,1463,1516 (v1.21.1) "Fatal: rx buffer recv completed with error", '
            '"Remote write completed with error. RC: %d. ...", "Unable to read from fi_cq_readerr. RC: %zd. '
            'Error: %s"; '
            'src/nccl_ofi_rdma.c:1755 (v1.14.0) "Request %p completed with error. RC: %d. Error: %d (%s). ..."',
        ),
        "meaning": "A libfabric (EFA) transfer of aws-ofi-nccl completed with an error: the NIC or the peer failed mid-transfer.",
        "hint": (
            "The prov_errno/Error text names the EFA failure: a dead or unreachable peer (check that process), a "
            "security group without the self-referencing rule, or a faulty EFA device (dmesg on the node)."
        ),
        "patterns": (r"NET/OFI .*completed with error", r"Unable to read from fi_cq_readerr"),
        "triggers": ("completed with error", "fi_cq_readerr"),
    },
    {
        "id": "sharp_error",
        "sources": (
            'Mellanox/nccl-rdma-sharp-plugins src/sharp_plugin.c:87,281,302,338,387 (v2.1.0) WARN("SHARP: unsupported '
            'data type"), WARN("SHARP group create failed: %s(%d)"), WARN("SHARP regmr failed"), WARN("SHARP : unable '
            'to allocate request"), WARN("SHARP allreduce failed")',
        ),
        "meaning": "NVIDIA's SHARP CollNet plugin (nccl-rdma-sharp-plugins) failed to set up or run an in-network reduction.",
        "hint": (
            "Check the SHARP aggregation manager (sharp_am) on the fabric and the HPC-X version of the image, or turn "
            "SHARP off with NCCL_COLLNET_ENABLE=0 to confirm the rest of the network works."
        ),
        "patterns": (r"SHARP(?: ?:)? (?:unsupported|unable to)", r"SHARP \w+(?: \w+)? failed"),
        "triggers": ("SHARP",),
    },
)

SIGNATURE_IDS = tuple(entry["id"] for entry in CATALOG)

# ncclResult_t (NVIDIA/nccl src/nccl.h.in, v2.21.5-1 .. v2.30.7-1) -> (signature id, ncclGetErrorString text,
# src/init.cc). ncclSuccess is no failure; ncclNumResults is no code.
RESULT_CODES = {
    "ncclSuccess": (None, "no error"),
    "ncclUnhandledCudaError": ("unhandled_cuda_error", "unhandled cuda error (run with NCCL_DEBUG=INFO for details)"),
    "ncclSystemError": ("unhandled_system_error", "unhandled system error (run with NCCL_DEBUG=INFO for details)"),
    "ncclInternalError": ("internal_error", "internal error - please report this issue to the NCCL developers"),
    "ncclInvalidArgument": ("invalid_argument", "invalid argument (run with NCCL_DEBUG=WARN for details)"),
    "ncclInvalidUsage": ("invalid_usage", "invalid usage (run with NCCL_DEBUG=WARN for details)"),
    "ncclRemoteError": ("remote_error", "remote process exited or there was a network error"),
    "ncclInProgress": ("in_progress", "NCCL operation in progress"),
    "ncclTimeout": ("nccl_timeout", "timeout"),
}

HINTS = dict((entry["id"], entry["hint"]) for entry in CATALOG)
