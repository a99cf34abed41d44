#include "volcanic/plugins/share.h"

#include "absl/strings/str_cat.h"
#include "volcanic/api/quantity.h"

namespace volcanic {
namespace {

std::string Amount(ResourceId r, int64_t v) {
  return ResourceNames::IsBytes(r) ? FormatByteQuantity(v) : FormatMilliQuantity(v);
}

}  // namespace

std::string QuotaShortfall(const std::string& what, ResourceId r, const Resource& asked, const Resource& taken,
                           const Resource& limit) {
  return absl::StrCat(what, ": ", ResourceNames::Name(r), " ", Amount(r, asked.Get(r)), " asked, ",
                      Amount(r, std::max<int64_t>(0, taken.Get(r))), " of ", Amount(r, limit.Get(r)), " taken");
}

}  // namespace volcanic
