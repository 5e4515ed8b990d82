#include "netprofile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/macro.h"
#include "common/strutil.h"

#define PROFILE_FILE_MAX (256 * 1024)
#define NM_DIR           "etc/NetworkManager/system-connections"
#define NETPLAN_DIR      "etc/netplan"
#define MTU_MIN          68
#define MTU_MAX          65535

static int warn(struct netprofiles *out, const char *file, unsigned line, const char *fmt, ...)
        _printf_(4, 5);

static int warn(struct netprofiles *out, const char *file, unsigned line, const char *fmt, ...)
{
        char what[256], text[600];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        if (line)
                snprintf(text, sizeof(text), "%s:%u: %s", file, line, what);
        else
                snprintf(text, sizeof(text), "%s: %s", file, what);
        return strv_push(&out->warnings, text);
}

static struct netprofile *add_profile(struct netprofiles *out)
{
        struct netprofile *v = realloc(out->v, (out->n + 1) * sizeof(*v));

        if (!v)
                return NULL;
        out->v = v;
        v[out->n] = (struct netprofile){ 0 };
        return &v[out->n++];
}

static int parse_mtu(const char *s, unsigned *mtu)
{
        uint64_t v;

        if (parse_uint64(s, 10, 0, MTU_MAX, &v) < 0 || (v != 0 && v < MTU_MIN))
                return -EINVAL;
        *mtu = (unsigned)v;
        return 0;
}

/* NetworkManager keyfiles: GKeyFile syntax; the ethernet setting is [ethernet] or its long
 * name [802-3-ethernet]; mtu 0 means automatic (NetworkManager leaves the MTU alone). */
struct keyfile {
        char id[128], ifname[64], type[64], mac[24];
        bool has_ethernet_section;
        unsigned mtu, mtu_line;
};

static bool is_ethernet_section(const char *s)
{
        return strcmp(s, "ethernet") == 0 || strcmp(s, "802-3-ethernet") == 0;
}

static int keyfile_value(struct netprofiles *out, const char *file, unsigned line, struct keyfile *k,
                         const char *section, const char *key, const char *value)
{
        if (strcmp(section, "connection") == 0) {
                if (strcmp(key, "id") == 0)
                        snprintf(k->id, sizeof(k->id), "%s", value);
                else if (strcmp(key, "interface-name") == 0)
                        snprintf(k->ifname, sizeof(k->ifname), "%s", value);
                else if (strcmp(key, "type") == 0)
                        snprintf(k->type, sizeof(k->type), "%s", value);
        } else if (is_ethernet_section(section)) {
                if (strcmp(key, "mtu") == 0) {
                        if (parse_mtu(value, &k->mtu) < 0) {
                                warn(out, file, line, "mtu \"%s\" is not 0 or a number from %d to %d", value,
                                     MTU_MIN, MTU_MAX);
                                return -EINVAL;
                        }
                        k->mtu_line = line;
                } else if (strcmp(key, "mac-address") == 0) {
                        snprintf(k->mac, sizeof(k->mac), "%s", value);
                }
        }
        return 0;
}

static void id_from_file_name(const char *file, char *id, size_t size)
{
        const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        size_t n = strlen(base);

        if (n > strlen(".nmconnection") && strcmp(base + n - strlen(".nmconnection"), ".nmconnection") == 0)
                n -= strlen(".nmconnection");
        snprintf(id, size, "%.*s", (int)n, base);
}

int netprofiles_parse_keyfile(struct netprofiles *out, const char *file, const char *text)
{
        _cleanup_free_ char *copy = strdup(text);
        struct keyfile k = { 0 };
        char section[64] = "";
        struct netprofile *p;
        unsigned line = 0;
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *s = copy; s; s = save) {
                char *eq, *l;

                save = strchr(s, '\n');
                if (save)
                        *save++ = '\0';
                line++;
                l = str_strip(s);
                if (!l[0] || l[0] == '#' || l[0] == ';')
                        continue;
                if (l[0] == '[') {
                        size_t n = strlen(l);

                        if (l[n - 1] != ']' || n < 3 || n - 2 >= sizeof(section)) {
                                warn(out, file, line, "expected a [section] line");
                                return -EINVAL;
                        }
                        snprintf(section, sizeof(section), "%.*s", (int)(n - 2), l + 1);
                        if (is_ethernet_section(section))
                                k.has_ethernet_section = true;
                        continue;
                }
                eq = strchr(l, '=');
                if (!eq || eq == l || !section[0]) {
                        warn(out, file, line,
                             !section[0] ? "a key before the first [section]" : "expected KEY=VALUE");
                        return -EINVAL;
                }
                *eq = '\0';
                if (keyfile_value(out, file, line, &k, section, str_strip(l), str_strip(eq + 1)) < 0)
                        return -EINVAL;
        }
        /* Only Ethernet profiles carry an Ethernet MTU; bonds, VLANs, Wi-Fi are someone else's. */
        if (k.type[0] ? !is_ethernet_section(k.type) : !k.has_ethernet_section)
                return 0;
        p = add_profile(out);
        if (!p)
                return -ENOMEM;
        p->manager = NETPROFILE_NETWORKMANAGER;
        if (k.id[0])
                snprintf(p->name, sizeof(p->name), "%s", k.id);
        else
                id_from_file_name(file, p->name, sizeof(p->name));
        snprintf(p->file, sizeof(p->file), "%s", file);
        snprintf(p->ifname, sizeof(p->ifname), "%s", k.ifname);
        snprintf(p->mac, sizeof(p->mac), "%s", k.mac);
        p->mtu = k.mtu;
        p->line = k.mtu_line ? k.mtu_line : 1;
        return 0;
}

/* netplan: network.ethernets.ID {mtu, match {name, macaddress}, set-name, renderer}. A later
 * file's setting of the same ID overrides an earlier one's, key by key, as netplan merges. */
struct yaml_walk {
        struct netprofiles *out;
        const char *file;
        yaml_document_t *doc;
};

static const char *scalar(yaml_node_t *n)
{
        return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static unsigned line_of(yaml_node_t *n)
{
        return (unsigned)n->start_mark.line + 1;
}

/* The value of key in a mapping node, or NULL. */
static yaml_node_t *mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
        for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top;
             pair++) {
                const char *k = scalar(yaml_document_get_node(doc, pair->key));

                if (k && strcmp(k, key) == 0)
                        return yaml_document_get_node(doc, pair->value);
        }
        return NULL;
}

static int expect_mapping(struct yaml_walk *w, yaml_node_t *n, const char *what)
{
        if (n->type == YAML_MAPPING_NODE)
                return 0;
        warn(w->out, w->file, line_of(n), "%s must be a mapping", what);
        return -EINVAL;
}

static struct netprofile *netplan_profile(struct netprofiles *out, const char *id)
{
        for (size_t i = 0; i < out->n; i++)
                if (out->v[i].manager == NETPROFILE_NETPLAN && strcmp(out->v[i].name, id) == 0)
                        return &out->v[i];
        return NULL;
}

static int netplan_ethernet(struct yaml_walk *w, const char *id, yaml_node_t *dev, const char *renderer)
{
        yaml_node_t *mtu = mapping_get(w->doc, dev, "mtu"), *match = mapping_get(w->doc, dev, "match"),
                    *set_name = mapping_get(w->doc, dev, "set-name"),
                    *own_renderer = mapping_get(w->doc, dev, "renderer");
        struct netprofile *p = netplan_profile(w->out, id);

        if (!p) {
                p = add_profile(w->out);
                if (!p)
                        return -ENOMEM;
                p->manager = NETPROFILE_NETPLAN;
                snprintf(p->name, sizeof(p->name), "%s", id);
                snprintf(p->ifname, sizeof(p->ifname), "%s", id);
                snprintf(p->file, sizeof(p->file), "%s", w->file);
                p->line = line_of(dev);
                snprintf(p->renderer, sizeof(p->renderer), "%s", "networkd");
        }
        if (scalar(own_renderer))
                renderer = scalar(own_renderer);
        if (renderer)
                snprintf(p->renderer, sizeof(p->renderer), "%s", renderer);
        if (mtu) {
                if (!scalar(mtu) || parse_mtu(scalar(mtu), &p->mtu) < 0) {
                        warn(w->out, w->file, line_of(mtu),
                             "network.ethernets.%s.mtu is not a number from %d to %d", id, MTU_MIN, MTU_MAX);
                        return -EINVAL;
                }
                snprintf(p->file, sizeof(p->file), "%s", w->file);
                p->line = line_of(mtu);
        }
        if (match) {
                const char *name, *mac;

                if (expect_mapping(w, match, "match") < 0)
                        return -EINVAL;
                name = scalar(mapping_get(w->doc, match, "name"));
                mac = scalar(mapping_get(w->doc, match, "macaddress"));
                snprintf(p->ifname, sizeof(p->ifname), "%s", name ? name : "");
                snprintf(p->mac, sizeof(p->mac), "%s", mac ? mac : "");
                snprintf(p->other_match, sizeof(p->other_match), "%s",
                         mapping_get(w->doc, match, "driver") ? "driver" : "");
        }
        /* set-name renames the matched netdev: the profile then applies to that name. */
        if (scalar(set_name))
                snprintf(p->ifname, sizeof(p->ifname), "%s", scalar(set_name));
        return 0;
}

static int netplan_walk(struct yaml_walk *w)
{
        yaml_node_t *root = yaml_document_get_root_node(w->doc), *network, *ethernets;
        const char *renderer;

        if (!root)
                return 0; /* an empty file */
        if (expect_mapping(w, root, "the document") < 0)
                return -EINVAL;
        network = mapping_get(w->doc, root, "network");
        if (!network)
                return 0;
        if (expect_mapping(w, network, "network") < 0)
                return -EINVAL;
        renderer = scalar(mapping_get(w->doc, network, "renderer"));
        ethernets = mapping_get(w->doc, network, "ethernets");
        if (!ethernets)
                return 0;
        if (expect_mapping(w, ethernets, "network.ethernets") < 0)
                return -EINVAL;
        for (yaml_node_pair_t *pair = ethernets->data.mapping.pairs.start;
             pair < ethernets->data.mapping.pairs.top; pair++) {
                yaml_node_t *key = yaml_document_get_node(w->doc, pair->key),
                            *dev = yaml_document_get_node(w->doc, pair->value);
                char what[128];
                int r;

                if (!scalar(key)) {
                        warn(w->out, w->file, line_of(key), "a network.ethernets key must be a name");
                        return -EINVAL;
                }
                snprintf(what, sizeof(what), "network.ethernets.%s", scalar(key));
                if (expect_mapping(w, dev, what) < 0)
                        return -EINVAL;
                r = netplan_ethernet(w, scalar(key), dev, renderer);
                if (r < 0)
                        return r;
        }
        return 0;
}

int netprofiles_parse_netplan(struct netprofiles *out, const char *file, const char *text, size_t len)
{
        yaml_parser_t parser;
        yaml_document_t doc;
        int r;

        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
        if (!yaml_parser_load(&parser, &doc)) {
                warn(out, file, (unsigned)parser.problem_mark.line + 1, "not YAML: %s",
                     parser.problem ? parser.problem : "cannot parse");
                yaml_parser_delete(&parser);
                return -EINVAL;
        }
        r = netplan_walk(&(struct yaml_walk){ .out = out, .file = file, .doc = &doc });
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        return r;
}

bool netprofile_matches(const struct netprofile *p, const char *ifname, const char *mac)
{
        if ((!p->ifname[0] && !p->mac[0]) || p->other_match[0])
                return false;
        if (p->mac[0] && strcasecmp(p->mac, mac) != 0)
                return false;
        if (!p->ifname[0])
                return true;
        if (p->manager == NETPROFILE_NETPLAN)
                return fnmatch(p->ifname, ifname, 0) == 0;
        return strcmp(p->ifname, ifname) == 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);

        return n > m && strcmp(s + n - m, suffix) == 0;
}

/* Anything but a regular file is -EISDIR: a FIFO named *.yaml would block the loop for ever. */
static int read_text(const char *path, char **text, size_t *len)
{
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *buf = malloc(PROFILE_FILE_MAX + 1);
        struct stat st;
        size_t n;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EISDIR;
        }
        f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return -errno;
        }
        if (!buf)
                return -ENOMEM;
        n = fread(buf, 1, PROFILE_FILE_MAX + 1, f);
        if (ferror(f))
                return -EIO;
        if (n > PROFILE_FILE_MAX)
                return -EFBIG;
        buf[n] = '\0';
        *text = TAKE_PTR(buf);
        *len = n;
        return 0;
}

/* Every file of dir ending in suffix, in name order (netplan's merge order). */
static int read_dir(struct netprofiles *out, const char *host_root, const char *dir, const char *suffix,
                    bool is_netplan)
{
        const char *sep = host_root[strlen(host_root) - 1] == '/' ? "" : "/";
        struct dirent **names = NULL;
        char path[4096];
        int n, r = 0;

        snprintf(path, sizeof(path), "%s%s%s", host_root, sep, dir);
        n = scandir(path, &names, NULL, alphasort);
        if (n < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *text = NULL;
                char host_path[300];
                size_t len = 0;
                int k;

                if (r < 0 || !has_suffix(names[i]->d_name, suffix))
                        goto next;
                snprintf(path, sizeof(path), "%s%s%s/%s", host_root, sep, dir, names[i]->d_name);
                snprintf(host_path, sizeof(host_path), "/%s/%s", dir, names[i]->d_name);
                k = read_text(path, &text, &len);
                if (k == -ENOMEM) {
                        r = k;
                        goto next;
                }
                /* NetworkManager keeps keyfiles root's only (it refuses others), and netplan wants
                 * its files so too: a daemon that is not root cannot judge them, which is not an
                 * error in the files. */
                if (k == -EACCES) {
                        r = strv_push(&out->unreadable, host_path);
                        goto next;
                }
                if (k < 0) {
                        r = warn(out, host_path, 0, "cannot read: %s",
                                 k == -EFBIG    ? "larger than 256 KiB"
                                 : k == -EISDIR ? "not a regular file"
                                                : strerror(-k));
                        goto next;
                }
                k = is_netplan ? netprofiles_parse_netplan(out, host_path, text, len)
                               : netprofiles_parse_keyfile(out, host_path, text);
                if (k == -ENOMEM)
                        r = k;
        next:
                free(names[i]);
        }
        free(names);
        return r;
}

int netprofiles_read(const char *host_root, struct netprofiles *out)
{
        int r;

        *out = (struct netprofiles){ 0 };
        r = read_dir(out, host_root, NM_DIR, ".nmconnection", false);
        if (r >= 0)
                r = read_dir(out, host_root, NETPLAN_DIR, ".yaml", true);
        if (r < 0)
                netprofiles_free(out);
        return r;
}

void netprofiles_free(struct netprofiles *p)
{
        free(p->v);
        strv_free(p->warnings);
        strv_free(p->unreadable);
        *p = (struct netprofiles){ 0 };
}
