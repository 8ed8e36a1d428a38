#include "topologies/src/topology_config.hpp"

#include <array>
#include <utility>

namespace gpuscale::topo {
namespace {

constexpr std::array kDeviceKinds{
    std::pair{DeviceKind::Gpu, "gpu"},          std::pair{DeviceKind::Cpu, "cpu"},
    std::pair{DeviceKind::PcieSwitch, "pcie_switch"}, std::pair{DeviceKind::Nic, "nic"},
    std::pair{DeviceKind::NetworkSwitch, "network_switch"},
    std::pair{DeviceKind::NvSwitch, "nvswitch"},
};

constexpr std::array kLinkKinds{
    std::pair{LinkKind::NvLink, "nvlink"},       std::pair{LinkKind::Pcie, "pcie"},
    std::pair{LinkKind::Qpi, "qpi"},             std::pair{LinkKind::Upi, "upi"},
    std::pair{LinkKind::XBus, "xbus"},           std::pair{LinkKind::InfiniBand, "infiniband"},
    std::pair{LinkKind::Ethernet, "ethernet"},
};

constexpr std::array kRoutingModes{
    std::pair{RoutingMode::Direct, "direct"},
    std::pair{RoutingMode::TwoHopGpu, "two_hop_gpu"},
    std::pair{RoutingMode::HostStaged, "host_staged"},
    std::pair{RoutingMode::Pcie, "pcie"},
};

template <typename Table, typename Enum>
const char* name_of(const Table& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "?";
}

template <typename Table>
auto value_of(const Table& table, const std::string& name)
    -> std::optional<typename Table::value_type::first_type> {
  for (const auto& [e, n] : table) {
    if (name == n) return e;
  }
  return std::nullopt;
}

template <typename Table>
std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> out;
  for (const auto& [e, name] : table) out.emplace_back(name);
  return out;
}

}  // namespace

const char* to_string(DeviceKind kind) { return name_of(kDeviceKinds, kind); }
const char* to_string(LinkKind kind) { return name_of(kLinkKinds, kind); }
const char* to_string(RoutingMode mode) { return name_of(kRoutingModes, mode); }

std::optional<DeviceKind> device_kind_from_string(const std::string& name) {
  return value_of(kDeviceKinds, name);
}
std::optional<LinkKind> link_kind_from_string(const std::string& name) {
  return value_of(kLinkKinds, name);
}
std::optional<RoutingMode> routing_mode_from_string(const std::string& name) {
  return value_of(kRoutingModes, name);
}

std::vector<std::string> device_kind_names() { return names_of(kDeviceKinds); }
std::vector<std::string> link_kind_names() { return names_of(kLinkKinds); }
std::vector<std::string> routing_mode_names() { return names_of(kRoutingModes); }

}  // namespace gpuscale::topo
