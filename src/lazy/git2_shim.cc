// The libgit2 functions msp calls, loaded from libgit2.so.1.5 on first use
// (lazy.h). Used by the prompt store (coding/prompt_store.cc),
// `msp ingest git` (ingest/git_ingest.cc) and ADR import's dates
// (mission/adr_git.cc).
#include <git2.h>

#include "lazy/lazy.h"

namespace {

constexpr msp::lazy::LazyLibrary kLibgit2{"libgit2.so.1.5", "libgit2-1.5",
                                          "the prompt store and git ingest (libgit2)"};

}  // namespace

#define MSP_LAZY_GIT(ret, name, params, args) MSP_LAZY_FUNCTION(kLibgit2, ret, name, params, args)

// clang-format off
MSP_LAZY_GIT(int, git_blob_create_from_buffer, (git_oid *id, git_repository *repo, const void *buffer, size_t len), (id, repo, buffer, len))
MSP_LAZY_GIT(void, git_blob_free, (git_blob *blob), (blob))
MSP_LAZY_GIT(int, git_blob_lookup, (git_blob **blob, git_repository *repo, const git_oid *id), (blob, repo, id))
MSP_LAZY_GIT(const void *, git_blob_rawcontent, (const git_blob *blob), (blob))
MSP_LAZY_GIT(git_object_size_t, git_blob_rawsize, (const git_blob *blob), (blob))
MSP_LAZY_GIT(const git_signature *, git_commit_author, (const git_commit *commit), (commit))
MSP_LAZY_GIT(const char *, git_commit_body, (git_commit *commit), (commit))
MSP_LAZY_GIT(int, git_commit_create_from_ids, (git_oid *id, git_repository *repo, const char *update_ref, const git_signature *author, const git_signature *committer, const char *message_encoding, const char *message, const git_oid *tree, size_t parent_count, const git_oid *parents[]), (id, repo, update_ref, author, committer, message_encoding, message, tree, parent_count, parents))
MSP_LAZY_GIT(void, git_commit_free, (git_commit *commit), (commit))
MSP_LAZY_GIT(const git_oid *, git_commit_id, (const git_commit *commit), (commit))
MSP_LAZY_GIT(int, git_commit_lookup, (git_commit **commit, git_repository *repo, const git_oid *id), (commit, repo, id))
MSP_LAZY_GIT(const char *, git_commit_message, (const git_commit *commit), (commit))
MSP_LAZY_GIT(int, git_commit_parent, (git_commit **out, const git_commit *commit, unsigned int n), (out, commit, n))
MSP_LAZY_GIT(const git_oid *, git_commit_parent_id, (const git_commit *commit, unsigned int n), (commit, n))
MSP_LAZY_GIT(unsigned int, git_commit_parentcount, (const git_commit *commit), (commit))
MSP_LAZY_GIT(const char *, git_commit_summary, (git_commit *commit), (commit))
MSP_LAZY_GIT(git_time_t, git_commit_time, (const git_commit *commit), (commit))
MSP_LAZY_GIT(int, git_commit_tree, (git_tree **tree_out, const git_commit *commit), (tree_out, commit))
MSP_LAZY_GIT(void, git_config_free, (git_config *cfg), (cfg))
MSP_LAZY_GIT(int, git_config_set_bool, (git_config *cfg, const char *name, int value), (cfg, name, value))
MSP_LAZY_GIT(int, git_config_set_int32, (git_config *cfg, const char *name, int32_t value), (cfg, name, value))
MSP_LAZY_GIT(void, git_diff_free, (git_diff *diff), (diff))
MSP_LAZY_GIT(const git_diff_delta *, git_diff_get_delta, (const git_diff *diff, size_t idx), (diff, idx))
MSP_LAZY_GIT(size_t, git_diff_num_deltas, (const git_diff *diff), (diff))
MSP_LAZY_GIT(int, git_diff_tree_to_tree, (git_diff **diff, git_repository *repo, git_tree *old_tree, git_tree *new_tree, const git_diff_options *opts), (diff, repo, old_tree, new_tree, opts))
MSP_LAZY_GIT(const git_error *, git_error_last, (void), ())
MSP_LAZY_GIT(int, git_libgit2_init, (void), ())
MSP_LAZY_GIT(int, git_libgit2_shutdown, (void), ())
MSP_LAZY_GIT(void, git_object_free, (git_object *object), (object))
MSP_LAZY_GIT(const git_oid *, git_object_id, (const git_object *obj), (obj))
MSP_LAZY_GIT(int, git_object_peel, (git_object **peeled, const git_object *object, git_object_t target_type), (peeled, object, target_type))
MSP_LAZY_GIT(int, git_oid_equal, (const git_oid *a, const git_oid *b), (a, b))
MSP_LAZY_GIT(char *, git_oid_tostr, (char *out, size_t n, const git_oid *id), (out, n, id))
MSP_LAZY_GIT(int, git_reference_create, (git_reference **out, git_repository *repo, const char *name, const git_oid *id, int force, const char *log_message), (out, repo, name, id, force, log_message))
MSP_LAZY_GIT(void, git_reference_free, (git_reference *ref), (ref))
MSP_LAZY_GIT(void, git_reference_iterator_free, (git_reference_iterator *iter), (iter))
MSP_LAZY_GIT(int, git_reference_iterator_glob_new, (git_reference_iterator **out, git_repository *repo, const char *glob), (out, repo, glob))
MSP_LAZY_GIT(int, git_reference_name_to_id, (git_oid *out, git_repository *repo, const char *name), (out, repo, name))
MSP_LAZY_GIT(int, git_reference_next_name, (const char **out, git_reference_iterator *iter), (out, iter))
MSP_LAZY_GIT(int, git_repository_config, (git_config **out, git_repository *repo), (out, repo))
MSP_LAZY_GIT(void, git_repository_free, (git_repository *repo), (repo))
MSP_LAZY_GIT(int, git_repository_head_unborn, (git_repository *repo), (repo))
MSP_LAZY_GIT(int, git_repository_init_ext, (git_repository **out, const char *repo_path, git_repository_init_options *opts), (out, repo_path, opts))
MSP_LAZY_GIT(int, git_repository_is_bare, (const git_repository *repo), (repo))
MSP_LAZY_GIT(int, git_repository_is_empty, (git_repository *repo), (repo))
MSP_LAZY_GIT(int, git_repository_open_ext, (git_repository **out, const char *path, unsigned int flags, const char *ceiling_dirs), (out, path, flags, ceiling_dirs))
MSP_LAZY_GIT(const char *, git_repository_path, (const git_repository *repo), (repo))
MSP_LAZY_GIT(const char *, git_repository_workdir, (const git_repository *repo), (repo))
MSP_LAZY_GIT(int, git_revparse_single, (git_object **out, git_repository *repo, const char *spec), (out, repo, spec))
MSP_LAZY_GIT(void, git_revwalk_free, (git_revwalk *walk), (walk))
MSP_LAZY_GIT(int, git_revwalk_new, (git_revwalk **out, git_repository *repo), (out, repo))
MSP_LAZY_GIT(int, git_revwalk_next, (git_oid *out, git_revwalk *walk), (out, walk))
MSP_LAZY_GIT(int, git_revwalk_push, (git_revwalk *walk, const git_oid *id), (walk, id))
MSP_LAZY_GIT(int, git_revwalk_push_head, (git_revwalk *walk), (walk))
MSP_LAZY_GIT(int, git_revwalk_push_range, (git_revwalk *walk, const char *range), (walk, range))
MSP_LAZY_GIT(int, git_revwalk_sorting, (git_revwalk *walk, unsigned int sort_mode), (walk, sort_mode))
MSP_LAZY_GIT(void, git_signature_free, (git_signature *sig), (sig))
MSP_LAZY_GIT(int, git_signature_new, (git_signature **out, const char *name, const char *email, git_time_t time, int offset), (out, name, email, time, offset))
MSP_LAZY_GIT(const git_tree_entry *, git_tree_entry_byindex, (const git_tree *tree, size_t idx), (tree, idx))
MSP_LAZY_GIT(int, git_tree_entry_bypath, (git_tree_entry **out, const git_tree *root, const char *path), (out, root, path))
MSP_LAZY_GIT(void, git_tree_entry_free, (git_tree_entry *entry), (entry))
MSP_LAZY_GIT(const char *, git_tree_entry_name, (const git_tree_entry *entry), (entry))
MSP_LAZY_GIT(git_object_t, git_tree_entry_type, (const git_tree_entry *entry), (entry))
MSP_LAZY_GIT(size_t, git_tree_entrycount, (const git_tree *tree), (tree))
MSP_LAZY_GIT(const git_oid *, git_tree_id, (const git_tree *tree), (tree))
MSP_LAZY_GIT(int, git_tree_lookup, (git_tree **out, git_repository *repo, const git_oid *id), (out, repo, id))
MSP_LAZY_GIT(const git_tree_entry *, git_tree_entry_byname, (const git_tree *tree, const char *filename), (tree, filename))
MSP_LAZY_GIT(const git_oid *, git_tree_entry_id, (const git_tree_entry *entry), (entry))
MSP_LAZY_GIT(void, git_tree_free, (git_tree *tree), (tree))
MSP_LAZY_GIT(void, git_treebuilder_free, (git_treebuilder *bld), (bld))
MSP_LAZY_GIT(int, git_treebuilder_insert, (const git_tree_entry **out, git_treebuilder *bld, const char *filename, const git_oid *id, git_filemode_t filemode), (out, bld, filename, id, filemode))
MSP_LAZY_GIT(int, git_treebuilder_new, (git_treebuilder **out, git_repository *repo, const git_tree *source), (out, repo, source))
MSP_LAZY_GIT(int, git_treebuilder_write, (git_oid *id, git_treebuilder *bld), (id, bld))
// clang-format on
