#if canImport(Glibc)
    import Glibc
#endif

/// Folders px makes for itself and removes whole (a temporary transfer tree, a dry run's temporary index).
public enum FileTree {
    /// Removes `path` and everything in it, depth first; links are removed, never followed.
    public static func remove(_ path: String) {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name == "." || name == ".." { continue }
                let child = path + "/" + name
                var info = stat()
                guard lstat(child, &info) == 0 else { continue }
                if info.st_mode & S_IFMT == S_IFDIR { remove(child) } else { unlink(child) }
            }
            closedir(directory)
        }
        rmdir(path)
    }
}
