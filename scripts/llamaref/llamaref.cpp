// llamaref dumps llama.cpp's reference outputs for a GGUF model in the
// fixtures' reference JSON schema (see the fixtures README, section 3): for
// each prompt, the tokens (add_special = true, parse_special = false), the
// 10 largest logits at every prompt position, every logit at the last
// position, and 32 greedy steps with their top 5. The whole prompt is one
// batch (n_batch = n_ubatch = its length), then one token per step; one
// thread, F32 KV cache, no flash attention, no weight repacking.
//
// Build against a llama.cpp build (commit 3f545be, shared or static
// libraries), from the repository root:
//
//   LLAMA=/work/llama
//   g++ -O2 -std=c++17 -o /tmp/llamaref scripts/llamaref/llamaref.cpp \
//       -I$LLAMA/src/include -I$LLAMA/src/ggml/include \
//       -L$LLAMA/build/bin -lllama -lggml -lggml-base -lggml-cpu \
//       -Wl,-rpath,$LLAMA/build/bin -fopenmp -lstdc++ -lm -lpthread
//
// Run (scripts/llamaref/gen.sh does this for every tiny family model):
//
//   /tmp/llamaref MODEL.gguf SHA256 NAME=PROMPT_FILE... > reference.json
#include "llama.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

static const int n_greedy = 32;

static std::string json_str(const std::string & s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += (char) c;
                }
        }
    }
    return out + "\"";
}

static std::string num(float v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

// top returns the k largest logits as "[[id, logit], ...]" (ties by id).
static std::string top(const float * logits, int n_vocab, int k, int * argmax) {
    std::vector<int> ids(n_vocab);
    for (int i = 0; i < n_vocab; i++) ids[i] = i;
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int a, int b) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    if (argmax) *argmax = ids[0];
    std::string out = "[";
    for (int i = 0; i < k; i++) {
        out += (i ? ", [" : "[") + std::to_string(ids[i]) + ", " + num(logits[ids[i]]) + "]";
    }
    return out + "]";
}

static void die(const char * msg) {
    fprintf(stderr, "llamaref: %s\n", msg);
    exit(1);
}

int main(int argc, char ** argv) {
    if (argc < 4) die("usage: llamaref MODEL.gguf SHA256 NAME=PROMPT_FILE...");
    std::string path = argv[1], sha = argv[2];
    std::vector<std::pair<std::string, std::string>> cases;
    for (int i = 3; i < argc; i++) {
        std::string a = argv[i];
        size_t eq = a.find('=');
        if (eq == std::string::npos) die("a case must be NAME=PROMPT_FILE");
        std::ifstream f(a.substr(eq + 1), std::ios::binary);
        if (!f) die("cannot read a prompt file");
        std::stringstream ss;
        ss << f.rdbuf();
        cases.emplace_back(a.substr(0, eq), ss.str());
    }
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.use_extra_bufts = false; // no CPU weight repacking
    llama_model * model = llama_model_load_from_file(path.c_str(), mp);
    if (!model) die("cannot load the model");
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);
    char desc[256];
    llama_model_desc(model, desc, sizeof desc);
    std::string name = path.substr(path.find_last_of('/') + 1);

    std::string out_cases;
    int n_ctx = 0, n_batch = 0;
    for (auto & [cname, prompt] : cases) {
        std::vector<llama_token> toks(prompt.size() + 8);
        int n = llama_tokenize(vocab, prompt.data(), (int32_t) prompt.size(), toks.data(), (int32_t) toks.size(), true, false);
        if (n <= 0) die("tokenize failed");
        toks.resize(n);
        llama_context_params cp = llama_context_default_params();
        n_ctx = n + n_greedy + 16;
        n_batch = n;
        cp.n_ctx = n_ctx;
        cp.n_batch = n;
        cp.n_ubatch = n;
        cp.n_threads = 1;
        cp.n_threads_batch = 1;
        cp.type_k = GGML_TYPE_F32;
        cp.type_v = GGML_TYPE_F32;
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
        llama_context * ctx = llama_init_from_model(model, cp);
        if (!ctx) die("cannot create a context");
        llama_batch b = llama_batch_init(n, 0, 1);
        for (int i = 0; i < n; i++) {
            b.token[i] = toks[i];
            b.pos[i] = i;
            b.n_seq_id[i] = 1;
            b.seq_id[i][0] = 0;
            b.logits[i] = true;
        }
        b.n_tokens = n;
        if (llama_decode(ctx, b) != 0) die("prompt decode failed");
        std::string c = "{\"name\": " + json_str(cname) + ", \"model\": " + json_str(name) + ", \"prompt\": " + json_str(prompt) + ", \"tokens\": [";
        for (int i = 0; i < n; i++) c += (i ? ", " : "") + std::to_string(toks[i]);
        c += "], \"top_logits_first_position\": 0, \"top_logits_per_position\": [";
        for (int i = 0; i < n; i++) c += (i ? ", " : "") + top(llama_get_logits_ith(ctx, i), n_vocab, 10, nullptr);
        c += "], \"last_logits\": [";
        const float * last = llama_get_logits_ith(ctx, n - 1);
        for (int i = 0; i < n_vocab; i++) c += (i ? ", " : "") + num(last[i]);
        c += "], \"greedy\": [";
        const float * logits = last;
        for (int step = 0; step < n_greedy; step++) {
            int tok;
            std::string t5 = top(logits, n_vocab, 5, &tok);
            c += (step ? ", " : "") + std::string("{\"token\": ") + std::to_string(tok) + ", \"top5\": " + t5 + "}";
            if (step == n_greedy - 1) break;
            llama_token t = tok;
            llama_batch one = llama_batch_get_one(&t, 1);
            if (llama_decode(ctx, one) != 0) die("decode failed");
            logits = llama_get_logits_ith(ctx, -1);
        }
        c += "]}";
        out_cases += (out_cases.empty() ? "" : ",\n") + c;
        llama_batch_free(b);
        llama_free(ctx);
    }
    printf("{\"model\": %s, \"model_sha256\": %s, \"n_vocab\": %d, \"llama_cpp\": {\"commit\": \"3f545beccee69d9975f466ec7e45fd9aacd8ba90\", \"build\": 10587},\n",
           json_str(name).c_str(), json_str(sha).c_str(), n_vocab);
    printf("\"generator\": \"scripts/llamaref/llamaref.cpp\",\n");
    printf("\"settings\": {\"n_threads\": 1, \"n_batch\": %d, \"n_ubatch\": %d, \"n_ctx\": %d, \"kv_cache_type\": \"f32\", \"flash_attn\": false, \"cpu_repack\": false, \"prefill\": \"single-batch\", \"add_special\": true, \"parse_special\": false, \"model_desc\": %s, \"system_info\": %s},\n",
           n_batch, n_batch, n_ctx, json_str(desc).c_str(), json_str(llama_print_system_info()).c_str());
    printf("\"cases\": [\n%s\n]}\n", out_cases.c_str());
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
