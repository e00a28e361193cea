#include "models/workload/job.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace clustersim::workload {

std::int64_t sequence_length(const JobConfig& job, const ModelSpec& model) {
  return job.seq_len > 0 ? job.seq_len : model.seq_len;
}

std::int64_t micro_batches(const JobConfig& job) {
  return job.global_batch / (job.parallelism.dp * job.micro_batch);
}

namespace {

/// The divisors of n closest to `near` (for hints).
std::int64_t nearest_divisor(std::int64_t n, std::int64_t near) {
  std::int64_t best = 1;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    for (const std::int64_t c : {d, n / d}) {
      if (std::llabs(c - near) < std::llabs(best - near) || (std::llabs(c - near) == std::llabs(best - near) && c < best)) {
        best = c;
      }
    }
  }
  return best;
}

/// A hint for a micro-batch of at least `least` sequences: the smallest that splits the
/// global batch over the replicas, or else a global batch that one of `least` splits.
std::string micro_batch_hint(const JobConfig& job, std::int64_t least) {
  const std::int64_t per_replica = job.global_batch / job.parallelism.dp;
  for (std::int64_t m = least; m <= per_replica; ++m) {
    if (per_replica % m == 0) return fmt::format("micro_batch: {}", m);
  }
  const std::int64_t per_step = job.parallelism.dp * least;
  return fmt::format("micro_batch: {}, global_batch: {}", least, (job.global_batch + per_step - 1) / per_step * per_step);
}

}  // namespace

std::vector<JobProblem> validate_job(const JobConfig& job, const ModelSpec& model, std::int64_t gpus_per_node) {
  std::vector<JobProblem> out;
  const Parallelism& p = job.parallelism;
  const auto add = [&](std::string path, std::string message, std::string hint = {},
                       std::vector<std::string> keys = {}) {
    out.push_back({std::move(path), std::move(message), std::move(hint), std::move(keys)});
  };

  // In double: four degrees of up to kMaxDegree multiply past int64 (exact up to 2^53, far
  // above any job's GPUs, so equality is exact).
  const double product = static_cast<double>(p.tp) * static_cast<double>(p.cp) * static_cast<double>(p.pp) *
                         static_cast<double>(p.dp);
  if (product != static_cast<double>(job.gpus)) {
    const double others = static_cast<double>(p.tp) * static_cast<double>(p.cp) * static_cast<double>(p.pp);
    const bool divides = others <= static_cast<double>(job.gpus) &&
                         job.gpus % static_cast<std::int64_t>(others) == 0;
    const bool fits = product <= static_cast<double>(kMaxDegree);
    add("parallelism",
        fmt::format("tp x cp x pp x dp = {} x {} x {} x {} = {}, but gpus is {}", p.tp, p.cp, p.pp, p.dp,
                    fits ? fmt::format("{:.0f}", product) : fmt::format("{:.3g}", product), job.gpus),
        divides ? fmt::format("dp: {} uses all {} GPUs", job.gpus / static_cast<std::int64_t>(others), job.gpus)
        : fits  ? fmt::format("gpus: {:.0f}", product)
                : fmt::format("degrees whose product is the job's {} GPUs", job.gpus),
        {"parallelism.tp", "parallelism.cp", "parallelism.pp", "parallelism.dp", "gpus"});
  }
  {
    std::vector<Axis> sorted = p.order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != std::vector<Axis>{Axis::tp, Axis::cp, Axis::pp, Axis::dp}) {
      add("parallelism.order", "must name each of tp, cp, pp and dp once", "order: [tp, cp, pp, dp]");
    }
  }
  const std::int64_t kv = model.kv_heads == 0 ? model.heads : model.kv_heads;
  const bool dense_mlps = model.experts == 0 || model.dense_layers > 0;
  // The tp to suggest, one for every check below: the nearest to the one given that divides
  // every width TP splits (the heads, the key/value heads, the MLP widths) and the node's
  // GPUs and the job's, where TP groups run fastest, inside a node (it suggested tp: 3 for an
  // MLP width of 11001 on 8 GPUs of 8, which the product check then refused, and each check
  // its own, one of which another refused).
  std::int64_t widths = std::gcd(model.heads, kv);
  if (dense_mlps) widths = std::gcd(widths, model.ffn_hidden);
  if (model.experts > 0) widths = std::gcd(widths, model.expert_ffn_hidden);
  const std::string tp_hint =
      fmt::format("tp: {}", nearest_divisor(std::max<std::int64_t>(1, std::gcd(widths, std::gcd(gpus_per_node, job.gpus))), p.tp));
  if (model.heads % p.tp != 0) {
    add("parallelism.tp", fmt::format("the model's {} attention heads do not divide among {} TP ranks", model.heads, p.tp),
        tp_hint);
  }
  if (model.heads % p.tp == 0 && kv % p.tp != 0 && p.tp % kv != 0) {
    add("parallelism.tp", fmt::format("the model's {} key/value heads neither divide among nor replicate over {} TP ranks",
                                      kv, p.tp),
        tp_hint);
  }
  // Every MLP width TP splits: the dense layers' and the experts' (a shared expert's is a
  // multiple of it). Checking the larger alone let an expert width of 4 on 8 ranks run its
  // experts at zero FLOPs while their weights counted half a column per rank.
  for (const auto& [width, what] : {std::pair{dense_mlps ? model.ffn_hidden : 0, "MLP width"},
                                    std::pair{model.experts > 0 ? model.expert_ffn_hidden : 0, "expert MLP width"}}) {
    if (width > 0 && width % p.tp != 0) {
      add("parallelism.tp", fmt::format("the {} {} does not divide among {} TP ranks", what, width, p.tp), tp_hint);
      break;
    }
  }
  const std::int64_t seq = sequence_length(job, model);
  // The sequence lengths that split as the checks below ask: multiples of 2 cp (cp > 1) and,
  // with sequence parallelism, of cp x tp. A hint rounds seq_len up to one: changing a
  // degree instead would change the job's GPU count.
  const std::int64_t seq_unit = std::lcm(p.cp > 1 ? 2 * p.cp : std::int64_t{1},
                                         p.sequence_parallel && p.tp > 1 ? p.cp * p.tp : std::int64_t{1});
  // Up, unless past seq_len's largest (then down); where no multiple fits, smaller degrees.
  constexpr std::int64_t kMaxSeqLen = 100'000'000;  // JobConfig's seq_len bound
  const std::int64_t seq_up = (seq + seq_unit - 1) / seq_unit * seq_unit;
  const std::int64_t seq_down = seq / seq_unit * seq_unit;
  const std::string seq_hint = seq_up <= kMaxSeqLen ? fmt::format("seq_len: {}", seq_up)
                               : seq_down > 0       ? fmt::format("seq_len: {}", seq_down)
                                                    : fmt::format("cp: {}", nearest_divisor(seq, p.cp));
  if (seq % p.cp != 0) {
    add("parallelism.cp", fmt::format("seq_len {} does not divide among {} CP ranks", seq, p.cp),
        seq_hint);
  } else if (p.cp > 1 && seq % (2 * p.cp) != 0) {
    // Causal attention is balanced over the CP ranks by cutting the sequence into 2 cp
    // chunks, rank r holding chunks r and 2cp-1-r (Megatron-LM, get_batch_on_this_cp_rank:
    // "assert 0 == val.shape[seq_dim] % (2 * cp_size)").
    add("parallelism.cp",
        fmt::format("seq_len {} does not cut into 2 x cp = {} chunks (each CP rank holds two, one from each end, "
                    "to balance causal attention)",
                    seq, 2 * p.cp),
        seq_hint);
  } else if (p.sequence_parallel && p.tp > 1 && (seq / p.cp) % p.tp != 0) {
    // Megatron-LM's sequence parallelism scatters the sequence over the TP group
    // (mappings.py: "First dimension of the tensor should be divisible by tensor parallel size").
    add("parallelism.sequence_parallel",
        fmt::format("the sequence of {} tokens{} does not divide among {} TP ranks", seq / p.cp,
                    p.cp > 1 ? fmt::format(" per CP rank (seq_len / cp = {} / {})", seq, p.cp) : std::string(), p.tp),
        seq_hint);
  }
  if (p.ep > 1 && model.experts == 0) {
    add("parallelism.ep", "expert parallelism needs a mixture-of-experts model (experts > 0)", "ep: 1, or a model with experts");
  }
  // An EP degree must divide both the experts and dp: the hints name one that does.
  const std::int64_t ep_fits = nearest_divisor(std::gcd(p.dp, model.experts > 0 ? model.experts : p.dp), p.ep);
  if (p.ep > 1 && model.experts > 0 && model.experts % p.ep != 0) {
    add("parallelism.ep", fmt::format("the model's {} experts do not divide among {} EP ranks", model.experts, p.ep),
        fmt::format("ep: {}", ep_fits));
  }
  if (p.dp % p.ep != 0) {
    add("parallelism.ep", fmt::format("ep {} must divide dp {} (expert groups are carved out of data-parallel groups)",
                                      p.ep, p.dp),
        fmt::format("ep: {}", ep_fits));
  }
  // Every model chunk needs a layer, except that the first and the last may hold only the
  // embedding and the output layer (as Llama 3 405B's 126 layers on 128 chunks).
  const std::int64_t chunks = p.pp * p.virtual_stages;
  if (chunks > 2 ? model.layers < chunks - 2 : model.layers < 1) {
    add("parallelism",
        fmt::format("{} layers cannot fill pp x virtual_stages = {} model chunks (the first and last may hold only the "
                    "embedding and output layer)",
                    model.layers, chunks),
        // With one stage per rank already, the fix is fewer stages (it suggested virtual_stages: 1
        // to a job that had it).
        // Fewer stages, with the replicas that keep the job's GPUs: pp and dp trade (a bare
        // "pp: 34 or fewer" led to the next error, the degrees no longer making the GPUs).
        p.virtual_stages > 1 && (model.layers + 2) / p.pp >= 1
            ? fmt::format("virtual_stages: {}", std::max<std::int64_t>(1, (model.layers + 2) / p.pp))
            : [&] {
                // (Only where the degrees make the job's GPUs: else that is said, and fixed, first.)
                if (product != static_cast<double>(job.gpus)) return fmt::format("pp: {} or fewer", model.layers + 2);
                // (Each stage holds virtual_stages chunks: the stages that fill are that many fewer.)
                const std::int64_t both = p.pp * p.dp;
                std::int64_t pp = std::min((model.layers + 2) / std::max<std::int64_t>(1, p.virtual_stages), both);
                while (pp > 1 && both % pp != 0) --pp;
                return fmt::format("pp: {} with dp: {}, the same GPUs", pp, both / pp);
              }(),
        {"parallelism.pp", "parallelism.virtual_stages", "model"});
  }
  if (p.virtual_stages > 1 && p.pp == 1) {
    add("parallelism.virtual_stages", "interleaved stages need pipeline parallelism (pp > 1)", "virtual_stages: 1, or pp: 2 or more");
  }
  const std::int64_t per_step = p.dp * job.micro_batch;
  if (job.global_batch % per_step != 0) {
    // The batch rounded up to a whole number of steps, or, where the replicas share it evenly,
    // the micro-batch sizes that divide a replica's share (a micro_batch of 3 set on the
    // command line was said at the file's global_batch, with its fix alone).
    std::string hint = fmt::format("global_batch: {}", std::max<std::int64_t>(1, (job.global_batch + per_step - 1) /
                                                                                   per_step) *
                                                           per_step);
    if (job.global_batch % p.dp == 0) {
      const std::int64_t share = job.global_batch / p.dp;
      // The divisors in pairs up to the square root (a share of 10^8 with few of them was
      // scanned to the end): the five smallest and the largest.
      std::vector<std::int64_t> low, high;
      for (std::int64_t m = 1; m * m <= share; ++m) {
        if (share % m != 0) continue;
        low.push_back(m);
        if (m * m != share) high.push_back(share / m);
      }
      std::vector<std::int64_t> sizes(low);
      sizes.insert(sizes.end(), high.rbegin(), high.rend());
      if (sizes.size() > 6) {
        sizes.resize(5);
        sizes.push_back(share);
      }
      hint += fmt::format(", or a micro_batch dividing the {} sequence{} of a replica: {}", share,
                          share == 1 ? "" : "s", fmt::join(sizes, ", "));
    }
    add("global_batch", fmt::format("{} sequence{} not split into micro-batches of {} over {} replica{} (dp x "
                                    "micro_batch = {})",
                                    job.global_batch, job.global_batch == 1 ? " does" : "s do", job.micro_batch, p.dp,
                                    p.dp == 1 ? "" : "s", per_step),
        std::move(hint), {"global_batch", "micro_batch", "parallelism.dp"});
  } else if (const std::int64_t passes = micro_batches(job) * p.pp * std::max<std::int64_t>(1, p.virtual_stages);
             passes > kMaxMicroBatches) {
    add("global_batch",
        fmt::format("{} micro-batches per replica (global_batch / (dp x micro_batch)) through {} pipeline chunks (pp x "
                    "virtual_stages) make {} passes a step; the step simulation takes at most {}",
                    micro_batches(job), p.pp * std::max<std::int64_t>(1, p.virtual_stages), passes, kMaxMicroBatches),
        // A larger micro-batch holds more activations (the memory check judges it): a
        // smaller global batch is said too.
        fmt::format("{} (larger micro-batches hold more activations), or global_batch: {} or less",
                    micro_batch_hint(job, (passes + kMaxMicroBatches - 1) / kMaxMicroBatches * job.micro_batch),
                    kMaxMicroBatches / (p.pp * std::max<std::int64_t>(1, p.virtual_stages)) * p.dp * job.micro_batch));
  } else if (p.virtual_stages > 1 && micro_batches(job) % p.pp != 0) {
    add("global_batch",
        fmt::format("{} sequences over dp {} x micro_batch {} make {} micro-batches per replica; the interleaved "
                    "schedule needs a multiple of pp ({})",
                    job.global_batch, p.dp, job.micro_batch, micro_batches(job), p.pp),
        fmt::format("global_batch: {}, or virtual_stages: 1",
                    ((micro_batches(job) + p.pp - 1) / p.pp) * p.pp * per_step));
  }
  if (job.train_tokens && job.train_tokens->value() < 1.0) {
    add("train_tokens", "must be at least one token", "a count such as train_tokens: 15.6T");
  }
  if (p.tp > gpus_per_node && gpus_per_node > 0) {
    add("parallelism.tp",
        fmt::format("tp {} spans more than one node of {} GPUs; tensor parallelism needs the scale-up network", p.tp,
                    gpus_per_node),
        fmt::format("tp: {}", nearest_divisor(gpus_per_node, p.tp)));
  }
  return out;
}

}  // namespace clustersim::workload
