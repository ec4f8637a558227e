# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Environment and network facts: the parser's part that reads NCCL_DEBUG=INFO lines, banners and launcher lines.

``FactsMixin`` (part of ``_nccl_parser.NcclLogParser``) keeps the NCCL and nccl-tests versions, the network
NCCL used (``Using network``, or the first ``via NET/<name>/`` channel line) and its OFI provider, fabric,
NICs and protocol, GPUDirect RDMA per host, ranks, nodes and hosts, and the test name and rank count of the
launcher's command line; it also sets the attempt flags that ``_nccl_signatures`` reads for socket_fallback.
Python 3.8+ syntax, standard library only (travels to managed hosts).
"""

from __future__ import annotations

import re

from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_base import MAX_HOSTS, MAX_STREAMS
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_network import normalize_network

MAX_RANK_INDEXES = 1 << 16      # distinct rank indexes remembered from rank lists
MAX_NET_CHANNELS = 2048         # NET channel lines read for the network name and GPUDirect RDMA

COLLECTIVES = (
    "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
    "reduce", "sendrecv", "scatter", "gather", "hypercube",
)

_VERSION_RX = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_LIBRARY_CODE_RX = re.compile(r"nccl-library=(\d{4,6})\b")
_TESTS_VERSION_RX = re.compile(r"nccl-tests version (\d+\.\d+\.\d+)")
_PROVIDER_RX = re.compile(r"Selected [Pp]rovider is ([\w.\-]+)")
_FABRIC_RX = re.compile(r"fabric is ([\w.\-]+)")
_NICS_RX = re.compile(r"\(found (\d+) nics?\)")
_PROTOCOL_RX = re.compile(r"Using transport protocol (\w+)(?: \((\w+) set\))?")
_CHANNEL_NET_RX = re.compile(r"via NET/([^/\s][^/]*?)/\d+(?:\(\d+\))?(/GDRDMA)?")   # "/1(2)": PXN proxy rank
_NRANKS_RX = re.compile(r"\bn[Rr]anks[ =:]+(\d+)")
_NNODES_RX = re.compile(r"\bnNodes[ =:]+(\d+)")
_NETWORK_NAME_RX = re.compile(r"\s*([^:\[\r\n]{0,40})")     # "AWS Libfabric"; stops at merged text
_LOADED_PLUGIN_RX = re.compile(r"Loaded net plugin (\S+)")
_NCCL_NET_ENV_RX = re.compile(r"NCCL_NET set by environment to (\S+)")
_HOST_RX = re.compile(r"(?<![\w.\-])([A-Za-z0-9][\w.\-]*):\d+:\d+ \[\d+\] ")
_RANK_LINE_RX = re.compile(
    r"#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?(?:Pid\s+\d+\s+)?on\s+(\S+)\s+device\s+(\d+)"
)
_NTHREAD_RX = re.compile(r"nThread\s+(\d+)\s+nGpus\s+(\d+)")
_TEST_NAME_RX = re.compile(r"\b(" + "|".join(
    ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv",
     "scatter", "gather", "hypercube", "reduce")) + r")_(?:perf|test)(?:_mpi)?\b")
_TEST_FLAG_RX = re.compile(r"run_nccl_tests\.sh\b.*?\s-t\s+(" + "|".join(COLLECTIVES) + r")\b")
_LAUNCHER_RX = re.compile(r"\b(?:mpirun|mpiexec|orterun|prterun)\b")
_NP_RX = re.compile(r"(?:^|\s)(?:-np|--np|-n|--n)\s+(\d+)\b")


class FactsMixin(object):
    """Versions, network, ranks, nodes and hosts of NcclLogParser."""

    def _init_facts(self):
        self._version = None
        self._library_version = None
        self._tests_version = None
        self._using_network = None
        self._provider = None
        self._fabric = None
        self._nics = None
        self._nics_by_host = {}
        self._protocol = None
        self._protocol_source = None
        self._no_providers = 0
        self._channel_net = None
        self._want_channels = True
        self._gdr = None
        self._net_channels = 0
        self._hosts_without_gdr = set()
        self._info_nranks = None
        self._info_nnodes = None
        self._rank_max = None
        self._rank_indexes = set()
        self._rank_hosts = set()
        self._hosts = set()
        self._prefix_hosts = {}
        self._np = None
        self._gpus_per_proc = None

    def _host(self, text):
        if len(self._hosts) < MAX_HOSTS:
            match = _HOST_RX.search(text)
            if match:
                self._hosts.add(match.group(1))

    def _info_host(self, text, msg):
        """Host of an INFO line; the 'host:pid:tid [dev] ' prefix repeats, so it is cached."""
        prefix = text[:len(text) - len(msg)]
        host = self._prefix_hosts.get(prefix)
        if host is None:
            match = _HOST_RX.search(prefix)
            host = match.group(1) if match else ""
            if len(self._prefix_hosts) >= MAX_STREAMS:
                self._prefix_hosts.clear()
            self._prefix_hosts[prefix] = host
        if host and len(self._hosts) < MAX_HOSTS:
            self._hosts.add(host)
        return host

    def _info(self, text, msg, line_no):
        """An NCCL INFO line the block scan stopped at; msg is the text after 'NCCL INFO '."""
        if msg.startswith("comm 0x") or msg.startswith("ncclCommInit"):
            self._info_comm(text, msg)
        elif msg.startswith("NCCL version"):
            self._info_host(text, msg)
            if self._version is None:
                match = _VERSION_RX.search(msg)
                if match:
                    self._version = match.group(1)
        elif msg.startswith("Channel"):
            if self._want_channels:
                self._info_channel(text, msg)
        else:
            self._info_net(text, msg, line_no)

    def _info_comm(self, text, msg):
        """'comm 0x.. rank 3 nRanks 16 nNodes 2 ..': ranks and nodes of a communicator."""
        self._info_host(text, msg)
        match = _NRANKS_RX.search(msg)
        if match:
            value = int(match.group(1))
            if self._info_nranks is None or value > self._info_nranks:
                self._info_nranks = value
        if "nNodes" in msg:
            match = _NNODES_RX.search(msg)
            if match:
                value = int(match.group(1))
                if self._info_nnodes is None or value > self._info_nnodes:
                    self._info_nnodes = value

    def _info_net(self, text, msg, line_no):
        """The network lines: 'Using network', NET/OFI, NET/IB, NET/Plugin, plugin failures, NCCL_NET."""
        if msg.startswith("Using network"):
            name = _NETWORK_NAME_RX.match(msg, 13).group(1).strip()
            self._using_network = name
            if name == "Socket":
                self._socket_line(line_no, text)
            else:
                self._strong_attempt = True
        elif msg.startswith("NET/OFI"):
            self._strong_attempt = True
            if "rovider is" in msg:
                self._selected_provider(text, msg)
            elif "transport protocol" in msg:
                match = _PROTOCOL_RX.search(msg)
                if match:
                    self._protocol = match.group(1)
                    self._protocol_source = match.group(2)
            elif "No eligible providers" in msg:
                self._no_providers += 1
        elif msg.startswith("NET/IB"):
            if "No device found" in msg or "[RO]" in msg:
                self._weak_attempt = True
            elif "Using [" in msg:
                self._strong_attempt = True
        elif msg.startswith("NET/Plugin"):
            loaded = _LOADED_PLUGIN_RX.search(msg)
            if loaded:
                if loaded.group(1) not in ("Socket", "IB"):
                    self._strong_attempt = True
            elif "dlerror" in msg or "Could not find" in msg or "No plugin found" in msg:
                self._weak_attempt = True
        elif msg.startswith("Failed to initialize NET plugin"):
            if msg.rstrip().endswith(" IB"):
                self._weak_attempt = True
            else:
                self._strong_attempt = True
        elif msg.startswith("NCCL_NET "):
            match = _NCCL_NET_ENV_RX.search(msg)
            if match and match.group(1).strip("'\"").lower() == "socket":
                self._socket_intended = True

    def _info_channel(self, text, msg):
        """'via NET/<name>/<dev>[/GDRDMA]': the network's name, and whether GPUDirect RDMA is used (per host)."""
        match = _CHANNEL_NET_RX.search(msg)
        if match:
            if self._channel_net is None:
                self._channel_net = match.group(1).strip()
            if match.group(2):
                if self._gdr is None:
                    self._gdr = True
            else:
                self._gdr = False
                host = self._info_host(text, msg)
                if host and len(self._hosts_without_gdr) < MAX_HOSTS:
                    self._hosts_without_gdr.add(host)
            self._net_channels += 1
            if self._net_channels >= MAX_NET_CHANNELS:
                self._want_channels = False

    def _selected_provider(self, text, msg):
        """'Selected provider is efa, fabric is efa-direct (found 16 nics)' (aws-ofi-nccl 1.14+) or
        'Selected Provider is efa (found 4 nics)' (older): provider, fabric, and NICs found per host."""
        match = _PROVIDER_RX.search(msg)
        if match:
            self._provider = match.group(1)
        match = _FABRIC_RX.search(msg)
        if match:
            self._fabric = match.group(1)
        match = _NICS_RX.search(msg)
        if match:
            nics = int(match.group(1))
            if self._nics is None or nics < self._nics:
                self._nics = nics
            host = self._info_host(text, msg)
            if host:
                known = self._nics_by_host.get(host)
                if known is None and len(self._nics_by_host) < MAX_HOSTS:
                    self._nics_by_host[host] = nics
                elif known is not None and nics < known:
                    self._nics_by_host[host] = nics

    def _facts(self, text):
        if "Rank" in text:
            match = _RANK_LINE_RX.search(text)
            if match:
                rank = int(match.group(1))
                host = match.group(2)
                if self._rank_max is None or rank > self._rank_max:
                    self._rank_max = rank
                if len(self._rank_indexes) < MAX_RANK_INDEXES:
                    self._rank_indexes.add(rank)
                if len(self._rank_hosts) < MAX_HOSTS:
                    self._rank_hosts.add(host)
                if len(self._hosts) < MAX_HOSTS:
                    self._hosts.add(host)
                return True
        if "NCCL version" in text and self._version is None:
            match = _VERSION_RX.search(text)
            if match:
                self._version = match.group(1)
        if "nccl-" in text:
            if self._tests_version is None:
                match = _TESTS_VERSION_RX.search(text)
                if match:
                    self._tests_version = match.group(1)
            if self._library_version is None:
                match = _LIBRARY_CODE_RX.search(text)
                if match:
                    code = int(match.group(1))
                    self._library_version = "%d.%d.%d" % (code // 10000, (code // 100) % 100, code % 100)
        if "run_nccl_tests" in text:
            match = _TEST_FLAG_RX.search(text)      # GKE wrapper: run_nccl_tests.sh -t all_gather
            if match:
                self._test = match.group(1) + "_perf"
        elif "_perf" in text or "_test" in text:
            match = _TEST_NAME_RX.search(text)
            if match:
                self._test = match.group(1) + "_perf"
            if self._np is None and _LAUNCHER_RX.search(text):
                head = text[:match.start()] if match else text
                np_match = _NP_RX.search(head)
                if np_match:
                    self._np = int(np_match.group(1))
        elif self._np is None and ("mpirun" in text or "mpiexec" in text):
            match = _NP_RX.search(text)
            if match and _LAUNCHER_RX.search(text):
                self._np = int(match.group(1))
        if "nThread" in text:
            match = _NTHREAD_RX.search(text)
            if match:
                per_proc = int(match.group(1)) * int(match.group(2))
                if self._gpus_per_proc is None or per_proc > self._gpus_per_proc:
                    self._gpus_per_proc = per_proc
        elif "anks" in text and self._info_nranks is None:
            match = _NRANKS_RX.search(text)
            if match:
                self._info_nranks = int(match.group(1))
        return False

    def _network_raw(self):
        """The network name as NCCL printed it ('Socket', 'IB', 'IBext_v8', 'AWS Libfabric'), or None."""
        return self._using_network or self._channel_net

    def _nranks(self):
        candidates = []
        if self._info_nranks is not None:
            candidates.append(self._info_nranks)
        if self._rank_max is not None:
            candidates.append(self._rank_max + 1)
        if self._np is not None:
            candidates.append(self._np * (self._gpus_per_proc or 1))
        return max(candidates) if candidates else None

    def _nnodes(self):
        if self._info_nnodes is not None:
            return self._info_nnodes
        # a rank list counts only when it lists every rank (authors often trim it)
        if self._rank_hosts and len(self._rank_indexes) == self._nranks():
            return len(self._rank_hosts)
        return None

    def _facts_result(self):
        """The fact keys of the result dict (network .. hosts), in the result's order."""
        return {
            "network": normalize_network(self._network_raw(), self._provider),
            "network_raw": self._network_raw(),
            "ofi_provider": self._provider,
            "ofi_fabric": self._fabric,
            "ofi_nics": self._nics,
            "ofi_nics_by_host": dict(self._nics_by_host),
            "ofi_protocol": self._protocol,
            "ofi_protocol_source": self._protocol_source,
            "ofi_no_eligible_providers": self._no_providers,
            "gdrdma": self._gdr,
            "hosts_without_gdrdma": sorted(self._hosts_without_gdr),
            "nccl_version": self._version or self._library_version or (
                self._json_facts["nccl_version"] if self._json_facts else None),
            "nccl_tests_version": self._tests_version,
            "nranks": self._nranks(),
            "nnodes": self._nnodes(),
            "hosts": sorted(self._hosts),
        }
