# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Failure signature catalog for NCCL / nccl-tests / launcher logs (data only).

Each entry names one failure signature that ``_nccl.py`` looks for, line by line:

* ``id``: stable identifier, used by ``level_assert`` and in reports;
* ``meaning``: one sentence, what the signature says happened;
* ``hint``: one or two sentences of remediation;
* ``patterns``: regular expressions (``re.search`` on the decoded line, case-sensitive);
* ``triggers``: plain substrings; a line is only tried against ``patterns`` when it
  contains one of them (cheap prefilter, so it must be implied by every pattern).

Two ids are not driven by ``patterns`` alone: ``wrong_results`` is also raised by the
table parser (a row whose ``#wrong`` count is > 0, or an ``Out of bounds values : N FAILED``
footer) and ``socket_fallback`` is decided at the end of the log (``Using network Socket``
after evidence that a plugin/OFI/IB network was attempted).

Sources: the seed repository's EFA troubleshooting table and Phase 0 checks
(docs/landscape.md sections 1 and 5), aws-ofi-nccl / nccl / nccl-tests issue threads and
the public logs in tests/unit/fixtures/nccl (see SOURCES.md there).
Standard library only; keep it importable on Python 3.8.
"""

from __future__ import annotations

CATALOG = (
    {
        "id": "segfault",
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
        "meaning": "A system call or network operation failed inside NCCL (ncclSystemError).",
        "hint": (
            "Check the NICs / EFA devices, 'ulimit -l' (should be unlimited), /dev/shm size and hugepages, then rerun "
            "with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see the failing call."
        ),
        "patterns": (r"unhandled system error", r"ncclSystemError"),
        "triggers": ("system error", "SystemError"),
    },
    {
        "id": "unhandled_cuda_error",
        "meaning": "A CUDA call failed inside NCCL (ncclUnhandledCudaError).",
        "hint": (
            "Check 'nvidia-smi' and dmesg for Xid errors, the driver/CUDA versions of the image, and GPU memory "
            "(sizes too large for the GPU); rerun with NCCL_DEBUG=INFO for the failing call."
        ),
        "patterns": (r"unhandled cuda error", r"ncclUnhandledCudaError"),
        "triggers": ("cuda error", "CudaError"),
    },
    {
        "id": "internal_error",
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
        "id": "socket_fallback",
        "meaning": (
            "NCCL uses TCP sockets although a plugin/OFI/IB network was attempted: traffic between nodes "
            "goes over TCP (about 3 GB/s instead of hundreds)."
        ),
        "hint": (
            "Usually aws-ofi-nccl is missing from the image (NGC images ship HPC-X verbs, not libfabric) or failed "
            "to initialise (see ofi_init_failed); set NCCL_NET explicitly (e.g. NCCL_NET=ofi) so that a broken "
            "plugin fails the run instead of silently falling back."
        ),
        # Decided by _nccl.py from 'Using network Socket' plus earlier evidence; no line patterns.
        "patterns": (),
        "triggers": (),
    },
)

SIGNATURE_IDS = tuple(entry["id"] for entry in CATALOG)

HINTS = dict((entry["id"], entry["hint"]) for entry in CATALOG)
