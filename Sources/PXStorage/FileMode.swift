import DICOMData

#if canImport(Glibc)
    import Glibc
#endif

/// The one mode of every file px places into a tree: 0644 as the process's umask allows, the mode `open(2)`
/// with 0644 gives. A temporary file made by `mkstemp(3)` (0600: a DICOMweb part, a zip entry) gets it too when
/// it is placed (``InstancePlacer/place(temporaryFile:dataSet:)``), so a file's mode does not depend on how it
/// arrived.
public enum FileMode {
    /// 0644 less the umask.
    public static let placed: mode_t = 0o644 & ~Self.umask

    /// The process's umask, read from `/proc/self/status` (`Umask:`, Linux 4.7+) because `umask(2)` can only be
    /// read by setting it, which would race with other threads creating files; 022 when it cannot be read.
    public static let umask: mode_t = {
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0o022 }
        defer { close(fd) }
        let file = OpenedFile(descriptor: fd, size: 0, path: "/proc/self/status")
        // procfs files report size 0: read a bounded prefix.
        let text: String
        do {
            text = String(decoding: try file.read(count: 8192), as: UTF8.self)
        } catch {
            return 0o022
        }
        for line in text.split(separator: "\n") where line.hasPrefix("Umask:") {
            let value = line.dropFirst("Umask:".count).trimmingCharacters(in: " \t")
            if let mask = mode_t(value, radix: 8) { return mask & 0o777 }
        }
        return 0o022
    }()
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var result = self
        while let first = result.first, set.contains(first) { result = result.dropFirst() }
        while let last = result.last, set.contains(last) { result = result.dropLast() }
        return result
    }
}
